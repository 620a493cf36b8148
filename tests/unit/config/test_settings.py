from __future__ import annotations

import re
import tomllib
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest
from places import REPO

from cli_agent.config.loading import load_settings
from cli_agent.config.settings import KEYS, LocalSettings, Settings, env_var
from cli_agent.config.show import render_paths, render_show
from cli_agent.contracts.errors import ConfigError
from cli_agent.validated.checked import Secret, check


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def user_file(home: Path, text: str) -> Path:
    return write(home / "config" / "config.toml", text)


def project_file(ws: Path, text: str) -> Path:
    return write(ws / ".cli-agent" / "config.toml", text)


def load(ws: Path, flags: dict | None = None, env: dict | None = None, config_file: Path | None = None,
         trust: bool | None = None):
    return load_settings(flags or {}, env=env or {}, config_file=config_file, workspace=ws, trust=trust)


def config_error(**kwargs) -> str:
    with pytest.raises(ConfigError) as info:
        load(**kwargs)
    message = str(info.value)
    assert "\n" not in message
    assert info.value.exit_code == 2
    return message


# ---- defaults and precedence --------------------------------------------------------------------------------------

def test_defaults_when_nothing_is_set(home: Path, ws: Path) -> None:
    loaded = load(ws)
    s = loaded.settings
    assert (s.model, s.max_steps, s.timeout, s.approval, s.protocol, s.output) == (None, 20, 300, "ask", "auto", "text")
    assert s.local == LocalSettings() and s.locks == []
    assert s.workspace == str(ws.resolve())
    assert set(loaded.sources) == set(KEYS) and set(loaded.sources.values()) == {"default"}


LAYERS = ["user", "project", "config", "env", "flag"]


@pytest.mark.parametrize("top", range(len(LAYERS)))
@pytest.mark.parametrize(("key", "values", "env_values", "get"), [
    ("max_steps", [1, 2, 3, 4, 5], ["4", "5"], lambda s: s.max_steps),
    ("protocol", ["auto", "native", "json", "native", "json"], ["native", "json"], lambda s: s.protocol),
    ("local.threads", [1, 2, 3, 4, 5], ["4", "5"], lambda s: s.local.threads),
])
def test_each_layer_overrides_the_ones_below(home: Path, ws: Path, tmp_path: Path, top: int, key: str,
                                             values: list, env_values: list, get) -> None:
    """Layers 0..top are set; the value of layer `top` wins and is reported as the source."""
    table, _, name = key.rpartition(".")

    def toml(value: object) -> str:
        line = f"{name} = {value!r}".replace("'", '"')
        return f"[{table}]\n{line}\n" if table else line + "\n"

    config = tmp_path / "explicit.toml"
    user_file(home, toml(values[0]))
    if top >= 1:
        project_file(ws, toml(values[1]))
    if top >= 2:
        write(config, toml(values[2]))
    env = {env_var(key): env_values[0]} if top >= 3 else {}
    flags = {key.replace(".", "_"): values[4]} if top >= 4 else {}
    loaded = load(ws, flags=flags, env=env, config_file=config if top >= 2 else None, trust=True)

    assert get(loaded.settings) == values[top]
    expected_source = {
        0: f"user config ({home / 'config' / 'config.toml'})",
        1: f"project config ({ws.resolve() / '.cli-agent' / 'config.toml'})",
        2: f"--config ({config})",
        3: f"env {env_var(key)}",
        4: f"flag --{key.replace('.', '-').replace('_', '-')}",
    }[top]
    assert loaded.sources[key] == expected_source
    assert loaded.sources["model"] == "default"


def test_layers_merge_key_by_key(home: Path, ws: Path) -> None:
    user_file(home, 'model = "openai/a"\nmax_steps = 7\n[local]\nthreads = 2\n')
    project_file(ws, 'max_steps = 9\n[local]\nmodel = "smollm2-135m"\n')
    loaded = load(ws, env={"CLI_AGENT_TIMEOUT": "12.5"}, flags={"yes": True, "max_steps": None}, trust=True)
    s = loaded.settings
    assert (s.model, s.max_steps, s.timeout, s.yes) == ("openai/a", 9, 12.5, True)
    assert (s.local.model, s.local.threads, s.local.context_size) == ("smollm2-135m", 2, 8192)
    assert loaded.sources["max_steps"].startswith("project config (")
    assert loaded.sources["local.threads"].startswith("user config (")
    assert loaded.sources["yes"] == "flag --yes"
    assert loaded.sources["timeout"] == "env CLI_AGENT_TIMEOUT"


def test_flags_accept_dashed_names_and_none_means_not_given(home: Path, ws: Path) -> None:
    loaded = load(ws, env={"CLI_AGENT_MAX_STEPS": "3"},
                  flags={"max-steps": None, "--local-context-size": 1024, "model": "local"})
    assert loaded.settings.max_steps == 3
    assert loaded.settings.local.context_size == 1024
    assert loaded.sources["local.context_size"] == "flag --local-context-size"


def test_unknown_flag_is_an_error_with_a_suggestion(home: Path, ws: Path) -> None:
    assert "did you mean 'max_steps'" in config_error(ws=ws, flags={"max_step": 3})


def test_bad_flag_value_names_the_flag(home: Path, ws: Path) -> None:
    message = config_error(ws=ws, flags={"max_steps": 0})
    assert message.startswith("flag --max-steps: ") and "greater than or equal to 1" in message


# ---- workspace and the project config -----------------------------------------------------------------------------

def test_project_config_is_found_through_the_workspace_flag(home: Path, ws: Path, tmp_path: Path) -> None:
    project_file(ws, "max_steps = 11\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    loaded = load(elsewhere, flags={"workspace": "../ws"})
    assert loaded.settings.max_steps == 11
    assert loaded.settings.workspace == str(ws.resolve())
    assert loaded.files[1] == ("project config", ws.resolve() / ".cli-agent" / "config.toml", True)


@pytest.mark.parametrize("layer", ["env", "config", "user"])
def test_workspace_from_env_config_or_user_config(home: Path, ws: Path, tmp_path: Path, layer: str) -> None:
    project_file(ws, "max_steps = 12\n")
    config = write(tmp_path / "c.toml", f'workspace = "{ws.as_posix()}"\n')
    if layer == "user":
        user_file(home, f'workspace = "{ws.as_posix()}"\n')
    env = {"CLI_AGENT_WORKSPACE": str(ws)} if layer == "env" else {}
    loaded = load(tmp_path, env=env, config_file=config if layer == "config" else None)
    assert loaded.settings.max_steps == 12


@pytest.mark.parametrize("trust", [False, True])
def test_workspace_in_a_project_config_is_ignored_with_a_note(home: Path, ws: Path, trust: bool) -> None:
    path = project_file(ws, 'workspace = "/tmp"\n')
    loaded = load(ws, trust=trust)
    assert loaded.settings.workspace == str(ws.resolve())
    [note] = loaded.notes
    assert str(path.resolve()) in note and "ignored workspace" in note and "only your user config" in note


def test_render_paths_lists_the_files_read(home: Path, ws: Path, tmp_path: Path) -> None:
    project_file(ws, "")
    config = write(tmp_path / "c.toml", "")
    loaded = load(ws, config_file=config)
    assert [label for label, _, _ in loaded.files] == ["user config", "project config", "--config"]
    lines = render_paths(loaded).splitlines()
    assert lines[0].startswith("user config") and lines[0].endswith("(missing)")
    assert lines[1].startswith("project config") and lines[1].endswith("(exists)")
    assert str(config) in lines[2] and lines[2].endswith("(exists)")


# ---- environment --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "expected"), [
    ("1", True), ("0", False), ("true", True), ("False", False), ("yes", True), ("no", False),
])
def test_env_booleans(home: Path, ws: Path, raw: str, expected: bool) -> None:
    assert load(ws, env={"CLI_AGENT_NO_TOOLS": raw}).settings.no_tools is expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("a/**, *.lock", ["a/**", "*.lock"]), ('["x,y", "z"]', ["x,y", "z"]), ("single", ["single"]),
])
def test_env_lists(home: Path, ws: Path, raw: str, expected: list) -> None:
    assert load(ws, env={"CLI_AGENT_LOCKS": raw}).settings.locks == expected


def test_env_scalars_and_empty_values(home: Path, ws: Path) -> None:
    env = {"CLI_AGENT_TIMEOUT": " 2.5 ", "CLI_AGENT_MAX_COST_USD": "0.1", "CLI_AGENT_LOCAL_MODEL": "/m/x.gguf",
           "CLI_AGENT_MODEL": "", "CLI_AGENT_HOME": "ignored", "CLI_AGENT_UNRELATED": "x"}
    loaded = load(ws, env=env)
    s = loaded.settings
    assert (s.timeout, s.max_cost_usd, s.local.model, s.model) == (2.5, 0.1, "/m/x.gguf", None)
    assert loaded.sources["model"] == "default"


@pytest.mark.parametrize(("var", "raw", "fragment"), [
    ("CLI_AGENT_MAX_STEPS", "many", "expected an integer, found string 'many'"),
    ("CLI_AGENT_MAX_STEPS", "0", "greater than or equal to 1"),
    ("CLI_AGENT_YES", "maybe", "expected true or false"),
    ("CLI_AGENT_PROTOCOL", "xml", "expected one of 'auto', 'native' or 'json'"),
    ("CLI_AGENT_TIMEOUT", "-1", "greater than 0"),
    ("CLI_AGENT_LOCKS", '["a",', "JSON"),
    ("CLI_AGENT_LOCKS", "[1, 2]", "expected a string"),
    ("CLI_AGENT_LOCAL_THREADS", "two", "expected an integer"),
])
def test_bad_env_values_name_the_variable(home: Path, ws: Path, var: str, raw: str, fragment: str) -> None:
    message = config_error(ws=ws, env={var: raw})
    assert message.startswith(f"env {var}: ")
    assert fragment in message


def test_cli_agent_config_env_stands_for_the_config_flag(home: Path, ws: Path, tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", "max_steps = 8\n")
    loaded = load(ws, env={"CLI_AGENT_CONFIG": str(config)})
    assert loaded.settings.max_steps == 8 and loaded.sources["max_steps"] == f"--config ({config})"


# ---- file errors --------------------------------------------------------------------------------------------------

def test_missing_config_file_is_an_error(home: Path, ws: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    message = config_error(ws=ws, config_file=missing)
    assert "--config" in message and str(missing) in message


def test_toml_syntax_error_names_file_line_and_column(home: Path, ws: Path) -> None:
    path = user_file(home, 'model = "a"\nmax_steps = = 3\n')
    message = config_error(ws=ws)
    assert re.fullmatch(rf"{re.escape(str(path))}:2: invalid TOML: .+ \(column \d+\)", message), message


@pytest.mark.parametrize(("text", "fragments"), [
    ("max_step = 3\n", ["max_step: unknown key (did you mean 'max_steps'?)"]),
    ("threads = 3\n", ["threads: unknown key (did you mean 'local.threads', in the [local] table?)"]),
    ("[local]\nthread = 3\n", [":2: local.thread: unknown key (did you mean 'local.threads'?)"]),
    ("zzz = 1\n", ["zzz: unknown key"]),
    ('max_steps = "20"\n', ["max_steps: expected an integer, found string '20'"]),
    ("max_steps = 2.0\n", ["max_steps: expected an integer, found float 2.0"]),
    ("yes = 1\n", ["yes: expected true or false, found integer 1"]),
    ('approval = "never"\n', ["approval: expected one of 'ask', 'edits' or 'all', found string 'never'"]),
    ('locks = "a"\n', ["locks: expected an array, found string 'a'"]),
    ("locks = [1]\n", ["locks[0]: expected a string, found integer 1"]),
    ("local = 3\n", ["local: expected a table, found integer 3"]),
    ("[local]\ncontext_size = 0\n", [":2: local.context_size: expected a value greater than or equal to 1"]),
    ("api_key = 12345\n", ["api_key: expected a string, found integer"]),
])
def test_bad_file_errors_are_one_line_with_file_and_key(home: Path, ws: Path, text: str,
                                                        fragments: list[str]) -> None:
    path = project_file(ws, text)
    message = config_error(ws=ws)
    assert re.match(rf"{re.escape(str(path.resolve()))}:\d: ", message), message
    for fragment in fragments:
        assert fragment in message


def test_bad_explicit_config_file_is_named(home: Path, ws: Path, tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", "timeout = 0\n")
    message = config_error(ws=ws, config_file=config)
    assert message.startswith(f"{config}:1: timeout: ")


def test_non_utf8_file_is_an_error(home: Path, ws: Path) -> None:
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'model = "\xff"\n')
    assert str(path) in config_error(ws=ws)


def test_several_problems_are_counted_on_one_line(home: Path, ws: Path) -> None:
    project_file(ws, 'max_steps = "a"\nyes = "b"\n')
    assert "(and 1 more)" in config_error(ws=ws)


# ---- show and the secret ------------------------------------------------------------------------------------------

def test_show_masks_the_api_key_and_names_sources(home: Path, ws: Path) -> None:
    secret = "sk-abcdefghijklmnopqrstuvwxyz0123456789wxyz"
    loaded = load(ws, env={"CLI_AGENT_API_KEY": secret}, flags={"max_steps": 5})
    shown = render_show(loaded)
    assert secret not in shown and secret not in repr(loaded.settings)
    assert 'api_key = "sk-…wxyz"  # env CLI_AGENT_API_KEY' in shown
    assert "max_steps = 5  # flag --max-steps" in shown
    assert "# model = (not set)  # default" in shown
    assert 'local.model = "qwen2.5-coder-1.5b"  # default' in shown
    assert loaded.settings.api_key is not None and loaded.settings.api_key.get_secret_value() == secret


def test_show_masks_a_short_key_entirely(home: Path, ws: Path) -> None:
    shown = render_show(load(ws, flags={"api_key": "Q7zK9pW2"}))
    assert "Q7zK9pW2" not in shown and 'api_key = "(set)"  # flag --api-key' in shown


def test_show_is_valid_toml_that_loads_back(home: Path, ws: Path, tmp_path: Path) -> None:
    loaded = load(ws, flags={"locks": ['a"b', "c\\d"], "system_prompt": "line1\nline2", "temperature": 0.5,
                             "local_threads": 3, "timeout": float("inf")})
    config = write(tmp_path / "shown.toml", render_show(loaded))
    assert tomllib.loads(config.read_text(encoding="utf-8"))["local"]["threads"] == 3
    again = load(ws, config_file=config).settings
    assert replace(again, config_files=()) == replace(loaded.settings, config_files=())


# ---- the models ---------------------------------------------------------------------------------------------------

def test_settings_are_frozen_and_their_check_forbids_unknown_keys_and_bad_values() -> None:
    s = Settings()
    with pytest.raises(FrozenInstanceError):
        s.max_steps = 0  # type: ignore[misc]
    for data in ({"nope": 1}, {"max_steps": 0}, {"local": {"threads": 0}}, {"sandbox": {"mode": "on"}}):
        with pytest.raises(ValueError):
            check(Settings, data)
    checked = check(Settings, {"max_steps": "7", "api_key": "sk-1", "local": {"threads": 2}})
    assert (checked.max_steps, checked.api_key, checked.local) == (7, Secret("sk-1"), LocalSettings(threads=2))
    assert "sk-1" not in repr(checked)


# ---- config.example.toml ------------------------------------------------------------------------------------------

def test_example_config_loads_and_matches_the_defaults(home: Path, ws: Path) -> None:
    user_file(home, (REPO / "config.example.toml").read_text(encoding="utf-8"))  # [sandbox]: user config only
    loaded = load(ws)
    assert replace(loaded.settings, config_files=()) == Settings(workspace=str(ws.resolve()))


def test_example_config_commented_out_examples_are_valid(home: Path, ws: Path, tmp_path: Path) -> None:
    table, checked = "", 0
    for line in (REPO / "config.example.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            table = line
        elif re.match(r"# [a-z_]+ = ", line):
            user_file(home, f"{table}\n{line[2:]}\n")
            load(ws)
            checked += 1
    assert checked >= 10


def test_example_config_mentions_every_key_and_env_var() -> None:
    text = (REPO / "config.example.toml").read_text(encoding="utf-8")
    for key in KEYS:
        name = key.rpartition(".")[2]
        assert re.search(rf"^#? ?{name} = ", text, re.MULTILINE), key
        assert env_var(key) in text or key.startswith(("sandbox.", "web.")), key  # user config only, no env
    assert "[local]" in text


def test_the_sandbox_table_is_user_config_only(home: Path, ws: Path, tmp_path: Path) -> None:
    write(ws / ".cli-agent" / "config.toml", "[sandbox]\nnetwork = true\n")
    loaded = load(ws, trust=True)  # ignored even in a trusted folder, with a note naming the key
    assert loaded.settings.sandbox.network is False
    assert any("sandbox.network" in note and "project config" in note for note in loaded.notes)
    config = write(tmp_path / "other.toml", 'sandbox = "off"\n')
    assert f"{config}:1: sandbox.mode: can be set only in the user config" in config_error(ws=tmp_path,
                                                                                           config_file=config)
    assert load(tmp_path, env={"CLI_AGENT_SANDBOX_NETWORK": "true"}).settings.sandbox.network is False
    user_file(home, 'sandbox = "off"\ncommands = "ask"\n')
    settings = load(tmp_path).settings
    assert settings.sandbox.mode == "off" and settings.commands == "ask"
