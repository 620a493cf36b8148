"""Workflow files: loading from the three sources, validation at load, argument parsing and asking."""

from __future__ import annotations

import os
import re
import textwrap

import pytest

from cli_agent.contracts.errors import WorkflowError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools.registry import Registry
from cli_agent.workflows.files import (
    Param,
    load_workflow_file,
    load_workflows,
)
from cli_agent.workflows.run import ask_missing, complete_arguments, parse_arguments, parse_tokens, render

BUILTINS = {"explain", "review", "add-tests", "refactor", "document", "init", "new-file"}
GOOD = """
name = "{name}"
title = "T"
description = "{description}"
category = "Mine"

[[steps]]
prompt = "do it"
"""


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("CLI_AGENT_HOME", str(home))
    return home


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    return root


def user_dir(home):
    folder = home / "config" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def project_dir(root):
    folder = root / ".cli-agent" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write(folder, filename, text):
    path = folder / filename
    path.write_text(textwrap.dedent(text))
    return path


def load_text(tmp_path, text):
    path = tmp_path / "wf.toml"
    path.write_text(textwrap.dedent(text))
    return load_workflow_file(path, Registry.builtin().names())


# -- sources --------------------------------------------------------------------------------------------------------

def test_the_builtins_load_cleanly_and_are_not_tools(ws):
    catalog = load_workflows(ws)
    assert catalog.errors == ()
    assert set(catalog.names()) >= BUILTINS
    assert not set(catalog.names()) & set(Registry.builtin().names())
    assert all(wf.source == "built-in" and wf.description for wf in catalog.workflows.values())
    assert list(catalog.by_category())[:3] == ["Understand", "Change", "Project"]


def test_nearer_source_wins_and_records_what_it_shadows(ws, isolated_home):
    user = write(user_dir(isolated_home), "explain.toml", GOOD.format(name="explain", description="user's"))
    project = write(project_dir(ws), "x.toml", GOOD.format(name="explain", description="project's"))
    write(user_dir(isolated_home), "mine.toml", GOOD.format(name="mine", description="only the user's"))
    catalog = load_workflows(Workspace(ws), trusted=True)
    explain = catalog.get("explain")
    assert explain is not None and explain.description == "project's" and explain.source == "project"
    assert explain.path == str(project)
    assert explain.shadows == (str(user), "builtin_workflows/explain.toml")
    assert catalog.get("mine").source == "user" and catalog.get("mine").shadows == ()
    assert catalog.get("review").source == "built-in"


def test_a_broken_file_is_reported_and_skipped_while_the_others_load(ws):
    folder = project_dir(ws)
    write(folder, "good.toml", GOOD.format(name="good", description="fine"))
    write(folder, "syntax.toml", "name = \n")
    write(folder, "keys.toml", "colour = 'red'\n" + GOOD.format(name="keys", description="d"))
    write(folder, "notes.txt", "not a workflow")
    catalog = load_workflows(ws)
    assert catalog.get("good") is not None and catalog.get("keys") is None
    keys, syntax = catalog.errors  # in file order
    assert syntax.startswith(str(folder / "syntax.toml") + ":1: invalid TOML")
    assert keys.startswith(str(folder / "keys.toml") + ":1: colour: unknown key")
    assert all("\n" not in e for e in catalog.errors)


def test_the_same_name_twice_in_one_source_is_an_error(ws):
    folder = project_dir(ws)
    write(folder, "a.toml", GOOD.format(name="dup", description="first"))
    write(folder, "b.toml", GOOD.format(name="dup", description="second"))
    catalog = load_workflows(ws)
    assert catalog.get("dup").description == "first"
    assert catalog.errors == (f"{folder / 'b.toml'}: name: 'dup' is already defined in {folder / 'a.toml'}",)


def test_the_name_defaults_to_the_file_name(tmp_path):
    wf = load_text(tmp_path, 'title = "T"\ndescription = "D"\n[[steps]]\nprompt = "x"\n')
    assert wf.name == "wf" and wf.category == "General"


# -- validation at load ---------------------------------------------------------------------------------------------

HEAD = 'title = "T"\ndescription = "D"\n'
PATH_PARAM = '[[params]]\nname = "path"\ntype = "path"\nrequired = true\n'


@pytest.mark.parametrize(("body", "reason"), [
    (PATH_PARAM + '[[steps]]\nprompt = "explain {{paht}}"\n',
     "steps[0].prompt: {{paht}} names no parameter (parameters: path)"),
    ('[[steps]]\nprompt = "explain {{ path }}"\n', "steps[0].prompt: {{path}} names no parameter (parameters: none)"),
    (PATH_PARAM + '[[steps]]\nprompt = "{{path | upper}}"\n', "is not a placeholder: only {{param}} is allowed"),
    (PATH_PARAM + '[[steps]]\ntool = "read_file"\n[steps.arguments]\npath = "{{file}}"\n',
     "steps[0].arguments.path: {{file}} names no parameter"),
    ('[[steps]]\ntool = "run_shell"\n', "steps[0].tool: unknown tool 'run_shell'"),
    ('[[steps]]\nprompt = "x"\ntools = ["read_file", "shell"]\n', "steps[0].tools: unknown tool 'shell'"),
    ('[[steps]]\ntool = "read_file"\n[steps.arguments]\npath = "a"\nlines = 3\n',
     "steps[0].arguments.lines: read_file has no such argument"),
    ('[[steps]]\ntool = "read_file"\n', "steps[0].arguments: read_file needs the argument 'path'"),
    ('[[steps]]\ntool = "list_files"\n[steps.arguments]\ndepth = "2"\n',
     "steps[0].arguments.depth: '2' is not of type 'integer'"),
    ('[[steps]]\nprompt = "x"\ntool = "read_file"\n', "steps[0]: a step has either prompt"),
    ('[[steps]]\nprompt = "x"\nwhen = "always"\n', "steps[0].when: unknown key"),
    ("", "steps: a workflow needs at least one [[steps]] table"),
    ('[[params]]\nname = "n"\ntype = "float"\n[[steps]]\nprompt = "x"\n',
     "params[0].type: expected one of 'string', 'int'"),
    ('[[params]]\nname = "n"\ntype = "choice"\n[[steps]]\nprompt = "x"\n',
     "params[0].choices: a choice parameter needs a non-empty choices list"),
    ('[[params]]\nname = "n"\nchoices = ["a"]\n[[steps]]\nprompt = "x"\n', "params[0].choices: only a choice"),
    ('[[params]]\nname = "n"\ntype = "int"\ndefault = "3"\n[[steps]]\nprompt = "x"\n',
     "params[0].default: expected a int value, got '3'"),
    ('[[params]]\nname = "n"\ntype = "choice"\nchoices = ["a"]\ndefault = "b"\n[[steps]]\nprompt = "x"\n',
     "params[0].default: 'b' is not one of the choices"),
    ('[[params]]\nname = "n"\nrequired = true\ndefault = "x"\n[[steps]]\nprompt = "x"\n',
     "params[0].default: a required parameter has no default"),
    ('[[params]]\nname = "n"\nmust_exist = true\n[[steps]]\nprompt = "x"\n', "params[0].must_exist: only a path"),
    ('[[params]]\nname = "n"\n[[params]]\nname = "n"\n[[steps]]\nprompt = "x"\n', "params: 'n' is declared twice"),
    ('[[params]]\nname = "my-param"\n[[steps]]\nprompt = "x"\n', "params[0].name: expected letters, digits and _"),
    ('[[params]]\nname = "n"\nhelp = 3\n[[steps]]\nprompt = "x"\n',
     "params[0].help: expected a string, found integer 3"),
    ('name = "has space"\n[[steps]]\nprompt = "x"\n', "name: 'has space' is not a workflow name"),
    ('category = 7\n[[steps]]\nprompt = "x"\n', "category: expected a string, found integer 7"),
    ('steps = "do it"\n', "steps: expected an array, found string 'do it'"),
])
def test_a_bad_file_fails_at_load_naming_the_file_field_and_reason(tmp_path, body, reason):
    with pytest.raises(WorkflowError) as caught:
        load_text(tmp_path, HEAD + body)
    message = str(caught.value)
    assert re.match(re.escape(str(tmp_path / "wf.toml")) + r"(:\d+)?: ", message), message
    assert reason in message
    assert "\n" not in message


def test_a_missing_description_is_named(tmp_path):
    with pytest.raises(WorkflowError, match=r"wf.toml: description: missing required key"):
        load_text(tmp_path, 'title = "T"\n[[steps]]\nprompt = "x"\n')


def test_an_unreadable_file_is_reported(tmp_path):
    path = tmp_path / "wf.toml"
    path.write_bytes(b"\xff\xfe not text")
    with pytest.raises(WorkflowError, match=r"wf\.toml: not UTF-8 text \(byte 0\)"):
        load_workflow_file(path, ["read_file"])


# -- parameters -----------------------------------------------------------------------------------------------------

def param(**kw):
    return Param(**({"name": "p"} | kw))


@pytest.mark.parametrize(("kind", "text", "value"), [
    ("int", "42", 42), ("int", " -3 ", -3),
    ("bool", "yes", True), ("bool", "No", False), ("bool", "true", True), ("bool", "FALSE", False),
    ("bool", "1", True), ("bool", "0", False),
    ("string", "anything at all", "anything at all"),
])
def test_values_convert_to_their_type(ws, kind, text, value):
    assert param(type=kind).convert(text, Workspace(ws)) == value


@pytest.mark.parametrize(("p", "text", "reason"), [
    (param(type="int"), "4.5", "p: expected a whole number, got '4.5'"),
    (param(type="int"), "many", "p: expected a whole number"),
    (param(type="bool"), "maybe", "p: expected yes/no (true/false, 1/0), got 'maybe'"),
    (param(type="choice", choices=("fast", "safe")), "quick", "p: expected one of fast, safe, got 'quick'"),
    (param(type="path"), "../elsewhere", "p: ../elsewhere climbs out of the workspace"),
    (param(type="path"), "/etc/passwd", "p: /etc/passwd is outside the workspace"),
    (param(type="path"), "a\0b", "p: path contains a NUL byte"),
    (param(type="path", must_exist=True), "src/ap.py", "p: src/ap.py does not exist in the workspace"),
    (param(required=True), "  ", "p: must not be empty"),
])
def test_bad_values_are_refused_with_what_was_expected(ws, p, text, reason):
    with pytest.raises(WorkflowError) as caught:
        p.convert(text, Workspace(ws))
    assert reason in str(caught.value)


def test_paths_are_normalised_inside_the_workspace(ws):
    workspace = Workspace(ws)
    assert param(type="path").convert("./src/../src/app.py", workspace) == "src/app.py"
    assert param(type="path").convert(os.path.join(str(ws), "src"), workspace) == "src"
    assert param(type="path", must_exist=True).convert("src/app.py", workspace) == "src/app.py"
    assert param(type="path").convert("new/file.py", workspace) == "new/file.py"
    assert param(type="choice", choices=("a", "b")).convert("b", workspace) == "b"


def test_a_missing_path_suggests_near_names(ws):
    with pytest.raises(WorkflowError, match=r"did you mean src/app.py"):
        param(type="path", must_exist=True).convert("app.py", Workspace(ws))


# -- arguments ------------------------------------------------------------------------------------------------------

def refactor(ws):
    return load_workflows(ws).get("refactor")


def test_positional_arguments_fill_params_in_declared_order(ws):
    values, missing = parse_arguments(refactor(ws), "src/app.py 'split main'", Workspace(ws))
    assert values == {"path": "src/app.py", "goal": "split main"} and missing == []


def test_key_value_arguments_in_any_order_and_mixed(ws):
    workspace = Workspace(ws)
    wf = refactor(ws)
    assert parse_arguments(wf, 'goal="make it fast" path=src/app.py', workspace)[0] == {
        "path": "src/app.py", "goal": "make it fast"}
    assert parse_arguments(wf, "goal=x src/app.py", workspace)[0] == {"path": "src/app.py", "goal": "x"}


def test_extra_words_join_a_trailing_string_param(ws):
    values, _ = parse_arguments(refactor(ws), "src/app.py use a dataclass for x=1", Workspace(ws))
    assert values["goal"] == "use a dataclass for x=1"


def test_missing_required_params_are_returned_not_raised(ws):
    values, missing = parse_arguments(refactor(ws), "", Workspace(ws))
    assert [p.name for p in missing] == ["path", "goal"] and values == {"path": None, "goal": None}


def test_defaults_fill_what_is_not_given(ws):
    values, missing = parse_arguments(load_workflows(ws).get("review"), "", Workspace(ws))
    assert values == {"path": ".", "focus": None} and missing == []


@pytest.mark.parametrize(("text", "reason"), [
    ("goal=x goal=y src/app.py", "goal: given twice"),
    ("'src/app.py", "cannot split the arguments: No closing quotation"),
    ("../up goal", "path: ../up climbs out of the workspace"),
])
def test_bad_arguments_raise_one_line_with_the_usage(ws, text, reason):
    with pytest.raises(WorkflowError) as caught:
        parse_arguments(refactor(ws), text, Workspace(ws))
    assert reason in str(caught.value) and str(caught.value).startswith("refactor: ")


def test_too_many_words_for_non_string_params(tmp_path, ws):
    wf = load_text(tmp_path, HEAD + '[[params]]\nname = "n"\ntype = "int"\n[[steps]]\nprompt = "{{n}}"\n')
    with pytest.raises(WorkflowError, match=r"too many arguments \(2 words for 1 parameter\(s\)\) \(usage: wf \[N\]\)"):
        parse_tokens(wf, ["1", "2"], Workspace(ws))


def test_ask_missing_asks_each_until_valid(ws):
    wf = refactor(ws)
    _, missing = parse_arguments(wf, "", Workspace(ws))
    answers = iter(["../out", "", "src/app.py", "make it small"])
    asked = []

    def ask(p, problem):
        asked.append((p.name, problem))
        return next(answers)

    assert ask_missing(wf, missing, ask, Workspace(ws)) == {"path": "src/app.py", "goal": "make it small"}
    assert asked[0] == ("path", None) and "climbs out" in asked[1][1]
    assert asked[2] == ("path", "path is required") and asked[3] == ("goal", None)


def test_ask_missing_gives_up_after_repeated_bad_answers_and_lets_ctrl_c_through(ws):
    wf = refactor(ws)
    _, missing = parse_arguments(wf, "", Workspace(ws))
    with pytest.raises(WorkflowError, match="no valid value for path"):
        ask_missing(wf, missing, lambda p, problem: "../x", Workspace(ws))

    def interrupt(p, problem):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ask_missing(wf, missing, interrupt, Workspace(ws))


def test_render_keeps_types_for_whole_placeholders_and_drops_absent_arguments():
    values = {"path": "a.py", "n": 3, "flag": True, "opt": None}
    assert render("see {{path}} {{ n }} times, {{flag}}{{opt}}", values) == "see a.py 3 times, true"
    assert render({"path": "{{path}}", "depth": "{{n}}", "pattern": "{{opt}}", "x": ["{{flag}}"]}, values) == {
        "path": "a.py", "depth": 3, "x": [True]}


def test_completion_offers_parameter_names_then_choices(tmp_path):
    wf = load_text(tmp_path, HEAD + textwrap.dedent("""
        [[params]]
        name = "kind"
        type = "choice"
        choices = ["added", "fixed"]
        [[params]]
        name = "loud"
        type = "bool"
        [[steps]]
        prompt = "{{kind}} {{loud}}"
    """))
    assert complete_arguments(wf, "") == ["added", "fixed", "kind=", "loud="]
    assert complete_arguments(wf, "f") == ["fixed"]
    assert complete_arguments(wf, "kind=a") == ["kind=added"]
    assert complete_arguments(wf, "fixed ") == ["yes", "no", "loud="]
    assert complete_arguments(wf, "loud=yes k") == ["kind="]
    assert complete_arguments(wf, "nope=") == []


def test_completion_of_a_path_parameter_offers_the_workspace_paths(tmp_path):
    wf = load_text(tmp_path, HEAD + textwrap.dedent("""
        [[params]]
        name = "path"
        type = "path"
        [[params]]
        name = "goal"
        [[steps]]
        prompt = "{{path}} {{goal}}"
    """))
    known = ["src/", "src/calc.py", "src/app.py", "README.md"]

    def paths(fragment: str) -> list[str]:
        return [p for p in known if p.startswith(fragment)]

    assert complete_arguments(wf, "src/c", paths) == ["src/calc.py"]
    assert complete_arguments(wf, "path=src/a", paths) == ["path=src/app.py"]
    assert complete_arguments(wf, "src/calc.py ", paths) == ["goal="]  # the next parameter is not a path
    assert complete_arguments(wf, "src/c") == []  # no workspace to look in
