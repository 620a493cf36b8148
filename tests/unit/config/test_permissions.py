"""The [[permissions]] rules as a table: which rule decides a call (deny, then ask, then allow; the first match of
the strictest), how a command line is read (each command of a compound line, wrappers looked through, what can't be
parsed never allowed), paths as gitignore globs, domains; the examples checked at load; trust; "always"."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_agent.config import (
    PermissionRule,
    Subject,
    append_rule,
    command_words,
    decide,
    example_problem,
    load_settings,
    own_rules_file,
    suggested_rule,
)
from cli_agent.contracts import ConfigError

PUSH = PermissionRule(decision="deny", tool="run_command", prefix=["git", "push"], name="no-push")
NPM = PermissionRule(decision="allow", tool="run_command", prefix=["npm", "test"], name="npm-test")
SRC = PermissionRule(decision="allow", tool="*_file", paths=["src/**"], name="src-edits")
SECRETS = PermissionRule(decision="deny", tool="*", paths=["src/secrets/"], name="secrets")
ASK_RM = PermissionRule(decision="ask", tool="run_command", prefix=["rm"], name="ask-rm")
DOCS = PermissionRule(decision="allow", tool="web_fetch", domains=["docs.python.org", "*.github.io"], name="docs")
RULES = (NPM, SRC, PUSH, SECRETS, ASK_RM, DOCS)


def cmd(line: str) -> Subject:
    return Subject("run_command", command=line)


def edit(*paths: str) -> Subject:
    return Subject("edit_file", paths=paths)


@pytest.mark.parametrize(("subject", "decided_by"), [
    (cmd("git push"), "no-push"),
    (cmd("git status && git push origin main"), "no-push"),  # compound
    (cmd("env GIT_TRACE=1 timeout -s KILL 30 nice -n 5 git push"), "no-push"),  # wrapped
    (cmd("/usr/bin/git push --force"), "no-push"),
    (cmd("git -C ../other push"), "no-push"),  # git's own options looked through
    (cmd("git -c user.name=x --git-dir ../r/.git --no-pager push"), "no-push"),
    (cmd("cd sub && git --work-tree=. -C .. push origin"), "no-push"),
    (cmd('bash -c "git push"'), "no-push"),  # the words anywhere: a deny is not dodged by quoting
    (cmd("bash -c 'git -C .. push'"), "no-push"),
    (cmd("echo $(git push)"), "no-push"),
    (cmd("npm test"), "npm-test"),
    (cmd("CI=1 npm test -- --watch=false 2>&1 | npm test"), "npm-test"),
    (cmd("npm test && curl evil.example"), None),  # an allow covers every command of the line, or none
    (cmd("npm test; rm -rf /"), "ask-rm"),
    (cmd("$(npm test)"), None),  # what can't be parsed never matches an allow
    (cmd("(npm test)"), None),
    (cmd("npm test `whoami`"), None),
    (cmd("npm testing"), None),
    (edit("src/app.py"), "src-edits"),
    (edit("src/deep/er/x.py"), "src-edits"),
    (edit("src/app.py", "lib/b.py"), None),  # every path, for an allow
    (edit("lib/b.py"), None),
    (edit("src/secrets/key.pem"), "secrets"),  # a deny beats an allow
    (edit("src/app.py", "src/secrets/key.pem"), "secrets"),  # any path, for a deny
    (Subject("read_file", paths=("src/secrets/key.pem",)), "secrets"),
    (Subject("web_fetch", host="docs.python.org"), "docs"),
    (Subject("web_fetch", host="me.github.io"), "docs"),
    (Subject("web_fetch", host="github.io"), None),
    (Subject("web_fetch", host="evil.org"), None),
    (Subject("search"), None),
])
def test_the_rule_that_decides_a_call(subject, decided_by):
    found = decide(RULES, subject)
    assert (found.name if found else None) == decided_by


def test_the_first_match_of_the_strictest_decision_wins_whatever_the_order():
    broad = PermissionRule(decision="deny", tool="run_command", prefix=["git"])
    narrow = PermissionRule(decision="allow", tool="run_command", prefix=["git", "status"])
    assert decide((narrow, broad), cmd("git status")) is broad
    assert decide((broad, narrow), cmd("git status")) is broad


def test_mcp_tools_by_name_and_glob():
    rule = PermissionRule(decision="deny", tool="github__*")
    assert decide((rule,), Subject("github__create_issue")) is rule
    assert decide((rule,), Subject("gitlab__create_issue")) is None


@pytest.mark.parametrize(("line", "words"), [
    ("a && b || c; d | e & f\ng", (("a",), ("b",), ("c",), ("d",), ("e",), ("f",), ("g",))),
    ("nohup stdbuf -o L xargs -n 1 echo", (("echo",),)),
    ("npm test > out.txt 2>&1", (("npm", "test", "2"),)),
    ('echo "a && b"', (("echo", "a && b"),)),
    ("echo 'unclosed", None),
    ("(cd x; ls)", None),
])
def test_how_a_command_line_is_read(line, words):
    assert command_words(line) == words


def test_examples_that_contradict_their_rule_are_named():
    assert example_problem(PermissionRule(decision="deny", tool="run_command", prefix=["git", "push"],
                                          match=["git push -f"], not_match=["git pull"])) is None
    assert "'git pull'" in str(example_problem(replace_match(PUSH, ["git pull"])))
    assert "not_match" in str(example_problem(PermissionRule(decision="allow", tool="*", paths=["src/**"],
                                                             not_match=["src/a.py"])))


def replace_match(rule: PermissionRule, match: list[str]) -> PermissionRule:
    return PermissionRule(decision=rule.decision, tool=rule.tool, prefix=rule.prefix, match=match)


def _project(ws: Path, text: str) -> None:
    (ws / ".cli-agent").mkdir(parents=True, exist_ok=True)
    (ws / ".cli-agent" / "config.toml").write_text(text)


PROJECT = ('max_steps = 5\n\n[[permissions]]\nname = "src-edits"\ndecision = "allow"\ntool = "*_file"\n'
           'paths = ["src/**"]\n\n[[permissions]]\ndecision = "deny"\ntool = "run_command"\nprefix = ["git", "push"]\n')


def test_an_untrusted_projects_allow_rules_are_named_once_and_ignored(tmp_path, isolated_home):
    _project(tmp_path, PROJECT)
    loaded = load_settings({}, env={}, workspace=tmp_path, trust=False)
    assert [r.describe() for r in loaded.settings.permissions] == ["deny run_command git push (project config:9)"]
    assert sum("src-edits (project config:3)" in n for n in loaded.notes) == 1
    trusted = load_settings({}, env={}, workspace=tmp_path, trust=True)
    assert [r.label for r in trusted.settings.permissions] == ["src-edits", "deny run_command git push"]
    assert not trusted.notes


def test_a_rule_whose_example_fails_is_a_config_error_naming_it(tmp_path, isolated_home):
    _project(tmp_path, '[[permissions]]\nname = "tests"\ndecision = "allow"\ntool = "run_command"\n'
                       'prefix = ["npm", "test"]\nmatch = ["npm run test"]\n')
    with pytest.raises(ConfigError, match=r"config.toml:1: .*rule 'tests': its match example 'npm run test'"):
        load_settings({}, env={}, workspace=tmp_path, trust=True)


def test_always_writes_the_rule_it_would_take_keeping_the_file(tmp_path, isolated_home):
    assert suggested_rule(cmd("npm test -- -k x")).prefix == ["npm", "test"]
    assert suggested_rule(cmd("ls -la")).prefix == ["ls"]
    assert suggested_rule(edit("src/pkg/a.py")).paths == ["src/pkg/**"]
    assert suggested_rule(Subject("web_fetch", host="docs.python.org")).domains == ["docs.python.org"]
    config = tmp_path / "config.toml"
    config.write_text("# mine\nmax_steps = 7  # kept\n")
    append_rule(config, suggested_rule(cmd("npm test")))
    assert config.read_text().startswith("# mine\nmax_steps = 7  # kept\n\n[[permissions]]\n")
    own = own_rules_file(tmp_path / "ws")
    assert not own.is_relative_to(tmp_path / "ws")
    append_rule(own, suggested_rule(edit("src/a.py")))
    (tmp_path / "ws").mkdir()
    rules = load_settings({}, env={}, workspace=tmp_path / "ws", config_file=config).settings.permissions
    assert [(r.label, r.origin.split(":")[0]) for r in rules] == [
        ("allow run_command npm test", "--config"), ("allow edit_file src/**", "your rules for this project")]
