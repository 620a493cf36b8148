"""Settings and the layered loader: flags > env > --config > project > user > defaults.

Every key has three spellings: `max_steps` in a TOML file, `--max-steps` as a flag, `CLI_AGENT_MAX_STEPS` in the
environment; the `[local]` table's keys are `local.model`, `--local-model` and `CLI_AGENT_LOCAL_MODEL`. Each layer
is validated on its own, so an error names the file, variable or flag it came from, and `Loaded.sources` says
where every effective value came from. The workspace (whose `.cli-agent/config.toml` is the project layer) comes
from the layers above and below it, never from the project config itself.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_origin

from cli_agent.contracts.errors import ConfigError
from cli_agent.fs import paths
from cli_agent.validated.checked import Secret, check, field_names, field_type, plainly_valid, rule

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["KEYS", "Loaded", "LocalSettings", "SandboxSettings", "Settings", "env_var", "flag_name", "load_settings",
           "mask_secret", "render_paths", "render_show"]


@dataclass(frozen=True)
class LocalSettings:
    """The bundled offline model (`model = "local"`)."""

    model: str = "qwen2.5-coder-1.5b"  # or "smollm2-135m", or a path to a .gguf file
    threads: int | None = rule(None, ge=1)
    context_size: int = rule(8192, ge=1)
    warm_start: bool = True  # keep the evaluated prompt's state on disk for the next process (providers.warm_cache)


@dataclass(frozen=True)
class SandboxSettings:
    """The command sandbox (`run_command`, `!COMMAND`). User config only: a project can't widen it."""

    mode: Literal["auto", "off"] = "auto"  # "off": no sandbox; every command is asked for and runs unconfined
    network: bool = False  # let commands reach the network
    read_paths: list[str] = field(default_factory=list)  # more folders commands may read
    write_paths: list[str] = field(default_factory=list)  # folders commands may write directly (not staged)
    env_allow: list[str] = field(default_factory=list)  # variables passed to commands beyond the base (NAME, PREFIX*)


def _mcp_servers_checked(servers: dict[str, Any]) -> dict[str, Any]:
    if not servers:  # the usual case: cli_agent.mcp is not even imported
        return servers
    from cli_agent.config.mcp_settings import parse_servers

    return parse_servers(servers)


@dataclass(frozen=True)
class Settings:
    """The effective settings. Values are checked where they come in (`load_settings`, by pydantic: `checked`);
    constructing one directly checks nothing."""

    model: str | None = None
    api_base: str | None = None
    api_key: Secret | None = None
    workspace: str = "."
    yes: bool = False
    approval: Literal["ask", "edits", "all"] = "ask"
    protocol: Literal["auto", "native", "json"] = "auto"
    max_steps: int = rule(20, ge=1)
    timeout: float = rule(300.0, gt=0)
    max_tokens_total: int | None = rule(None, ge=1)
    max_cost_usd: float | None = rule(None, ge=0)
    output: Literal["text", "json", "stream-json"] = "text"
    trace: str | None = None
    no_tools: bool = False
    system_prompt: str | None = None
    temperature: float | None = rule(None, ge=0)
    detail: Literal["full", "compact"] = "full"
    # What a small model needs from the harness (each can be switched off to measure it: `cli-agent eval --suite real`)
    read_before_edit: bool = True  # an edit of a file not read in the conversation is refused with its region
    loose_edits: bool = True  # edit_file matches ignoring trailing whitespace, indentation and line endings
    syntax_check: bool = True  # a change that would leave a .py file unparseable is refused before approval
    task_files: bool = True  # the files a task names are shown with it
    repo_map: bool = True  # where the task's words are defined (functions, classes, line numbers) is shown with it
    context_window: int | None = rule(None, ge=1)
    tool_result_max_chars: int = rule(20000, ge=1)
    max_retries: int = rule(4, ge=0)
    retry_base_delay: float = rule(1.0, ge=0)
    locks: list[str] = field(default_factory=list)
    commands: Literal["auto", "ask"] = "auto"  # "ask": ask before each command runs, not only for its changes
    test_command: str | None = None  # how to run the tests (else detected: pytest, npm test, cargo test, go test)
    verify: bool = True  # after a run's changes, the harness runs the tests in the command sandbox (agent.verify)
    verify_rounds: int = rule(2, ge=0)  # failing tests go back to the model this many times before the run ends
    attempts: int = rule(1, ge=1, le=10)  # candidates judged by the tests when a change still fails them
    command_timeout: float = rule(120.0, gt=0)  # a command's timeout when the call names none
    command_timeout_max: float = rule(600.0, gt=0)  # the most a call may ask for
    local: LocalSettings = field(default_factory=LocalSettings)
    # name -> McpServer; config files only
    mcp_servers: dict[str, Any] = rule(factory=dict, after=_mcp_servers_checked)
    config_files: tuple[str, ...] = ()  # the files read: set by the loader, not a key
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)


_TABLES: dict[str, type] = {"local": LocalSettings, "sandbox": SandboxSettings}  # a setting per key
_WHOLE = ("mcp_servers", "config_files")  # taken whole, from config files only: no flag, no env variable, not in KEYS
KEYS: tuple[str, ...] = (*(k for k in field_names(Settings) if k not in _TABLES and k not in _WHOLE),
                         *(f"{t}.{k}" for t, model in _TABLES.items() for k in field_names(model)))
USER_ONLY_TABLES = ("sandbox",)  # tables only the user config file may set


@dataclass(frozen=True)
class Loaded:
    settings: Settings
    sources: dict[str, str]  # key (e.g. "max_steps", "local.model") -> where its value came from
    files: list[tuple[str, Path, bool]]  # (label, path, exists), in the order they are layered
    notes: tuple[str, ...] = ()  # one-line warnings for the user (a project config's ignored keys)
    withheld: dict[str, Any] = field(default_factory=dict)  # project keys ignored until the folder is trusted


def env_var(key: str) -> str:
    return "CLI_AGENT_" + key.replace(".", "_").upper()


def flag_name(key: str) -> str:
    return "--" + key.replace(".", "-").replace("_", "-")


def mask_secret(secret: str) -> str:
    return f"{secret[:3]}…{secret[-4:]}" if len(secret) >= 16 else "(set)"


# ---- loading ----------------------------------------------------------------------------------------------------

_Layer = dict[str, tuple[Any, str]]  # key -> (validated value, source label)


def load_settings(flags: Mapping[str, Any], *, env: Mapping[str, str] | None = None,
                  config_file: Path | None = None, workspace: Path | None = None,
                  trust: bool | None = None) -> Loaded:
    """Layer defaults, user, project, --config, env and flags. A flag whose value is None was not given.

    `workspace` stands for the current directory: the workspace when no layer sets one, and the base of a
    relative one. `CLI_AGENT_CONFIG` in `env` stands for `config_file` when that is not given. The project config
    counts whole only in a trusted folder (`trust`, else `CLI_AGENT_TRUST` in `env`, else the trust store);
    elsewhere it may only narrow (`cli_agent.config.trust`).
    """
    env = os.environ if env is None else env
    flag_layer = _flag_layer(flags)
    env_layer = _env_layer(env)
    if config_file is None and env.get("CLI_AGENT_CONFIG", "").strip():
        config_file = Path(env["CLI_AGENT_CONFIG"].strip())
    explicit: _Layer = {}
    if config_file is not None:
        config_file = Path(config_file).expanduser()
        if not config_file.is_file():
            raise ConfigError(f"--config file not found: {config_file}")
        explicit = _file_layer(config_file, f"--config ({config_file})")
    user_path = paths.user_config_file()
    user = _file_layer(user_path, f"user config ({user_path})") if user_path.exists() else {}

    chosen = next((layer["workspace"] for layer in (flag_layer, env_layer, explicit, user) if "workspace" in layer),
                  None)
    base = (workspace or Path.cwd()).expanduser()
    ws = (base / Path(chosen[0]).expanduser()).resolve() if chosen else base.resolve()
    project_path = paths.project_config_file(ws)
    project: _Layer = {}
    notes: tuple[str, ...] = ()
    withheld: dict[str, Any] = {}
    if project_path.exists():
        project = _file_layer(project_path, f"project config ({project_path})")
        project, withheld, notes = _screened(project, user, project_path, ws, trust, env)

    for layer in (project, explicit):
        user_only = sorted({key for key in layer if key.partition(".")[0] in USER_ONLY_TABLES})
        if user_only:
            raise ConfigError(f"{layer[user_only[0]][1]}: '{user_only[0]}' can be set only in the user config "
                              f"({user_path})")
    values: dict[str, Any] = {}
    sources = dict.fromkeys(KEYS, "default")
    for layer in (user, project, explicit, env_layer, flag_layer):
        for key, (value, source) in layer.items():
            if key != "mcp_servers":  # merged by server name below
                values[key], sources[key] = value, source
    values["mcp_servers"], mcp_notes = _mcp_servers(user, project, explicit)
    notes = (*notes, *mcp_notes)
    values["workspace"] = str(ws)
    values["config_files"] = tuple(str(p) for p in (user_path, project_path, config_file) if p is not None)
    files = [("user config", user_path, user_path.exists()), ("project config", project_path, project_path.exists())]
    if config_file is not None:
        files.append(("--config", config_file, True))
    return Loaded(_built(values), sources, files, notes, withheld)


def _built(values: Mapping[str, Any]) -> Settings:
    """Settings of values that were checked layer by layer (`_Layer`): nothing is checked again."""
    nested = _nest(values)
    tables = {table: model(**nested.pop(table, {})) for table, model in _TABLES.items()}
    return Settings(**nested, **tables)


def _mcp_servers(user: _Layer, project: _Layer, explicit: _Layer) -> tuple[dict[str, Any], list[str]]:
    """The MCP servers of the config files, merged by name. A project's servers are in `project` only when the
    folder is trusted (`_screened` took them out otherwise, and said so)."""
    layers = [(layer["mcp_servers"][1], layer["mcp_servers"][0]) for layer in (user, project, explicit)
              if layer.get("mcp_servers", ({}, ""))[0]]
    if not layers:
        return {}, []
    from cli_agent.config.mcp_settings import merge_servers

    return merge_servers(layers, project_trusted=True)


def _screened(project: _Layer, user: _Layer, path: Path, ws: Path, trust: bool | None,
              env: Mapping[str, str]) -> tuple[_Layer, dict[str, Any], tuple[str, ...]]:
    """The project layer as the folder's trust allows: (kept layer, withheld key -> value, notes)."""
    from cli_agent.config.trust import screen_project, untrusted_note

    defaults = Settings()
    below = {key: user[key][0] if key in user else _get(defaults, key) for key in project}
    given = {key: value for key, (value, _) in project.items()}
    screened = screen_project(given, below, trusted=bool(trust))
    if screened.needs_trust and trust is None:
        from cli_agent.config.trusted_folders import TRUE, is_trusted

        trusted = env.get("CLI_AGENT_TRUST", "").strip().lower() in TRUE or is_trusted(ws)
        if trusted:
            screened = screen_project(given, below, trusted=True)
    note = untrusted_note(str(path), screened)
    return ({key: project[key] for key in screened.kept}, {key: given[key] for key in screened.needs_trust},
            (note,) if note else ())


def _flag_layer(flags: Mapping[str, Any]) -> _Layer:
    layer: _Layer = {}
    for name, value in flags.items():
        if value is None:
            continue
        key = _key_for_flag(name)
        where = f"flag {flag_name(key)}"
        if isinstance(value, str):
            value = _parse_string(key, value, where)
        layer[key] = (_validate_one(key, value, where), where)
    return layer


def _key_for_flag(name: str) -> str:
    key = name.lstrip("-").replace("-", "_")
    if key.startswith("local_") and "local." + key[6:] in KEYS:
        key = "local." + key[6:]
    if key not in KEYS:
        raise ConfigError(f"unknown setting {name!r}{_did_you_mean(key)}")
    return key


def _env_layer(env: Mapping[str, str]) -> _Layer:
    layer: _Layer = {}
    for key in KEYS:
        if key.partition(".")[0] in USER_ONLY_TABLES and "." in key:
            continue
        var = env_var(key)
        raw = env.get(var, "").strip()
        if raw:  # unset and empty are the same: not given
            where = f"env {var}"
            layer[key] = (_validate_one(key, _parse_string(key, raw, where), where), where)
    return layer


def _parse_string(key: str, raw: str, where: str) -> Any:
    """A string from the environment or the command line, as the field wants it; pydantic does the scalars."""
    if get_origin(_field_type(key)) is not list:
        return raw
    raw = raw.strip()
    if not raw.startswith("["):
        return [item.strip() for item in raw.split(",") if item.strip()]
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: expected a comma-separated list or a JSON array, found invalid JSON "
                          f"({exc.msg} at column {exc.colno})") from None


def _file_layer(path: Path, where: str) -> _Layer:
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or exc}") from None
    if "config_files" in data:
        raise ConfigError(f"{where}: unknown key 'config_files'")
    if isinstance(data.get("sandbox"), str):  # sandbox = "off" is [sandbox] mode = "off"
        data["sandbox"] = {"mode": data["sandbox"]}
    from pydantic import ValidationError

    try:
        model = check(Settings, data, strict=True)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {_describe(exc, with_key=True)}") from None
    keys = [k for k in data if k not in _TABLES]  # mcp_servers: whole
    keys += [f"{t}.{k}" for t in _TABLES if isinstance(data.get(t), dict) for k in data[t]]
    return {key: (_get(model, key), where) for key in keys}


def _validate_one(key: str, value: Any, where: str) -> Any:
    if plainly_valid(*_owner(key), value):  # most flags: pydantic is not imported
        return value
    from pydantic import ValidationError

    try:
        return _get(check(Settings, _nest({key: value})), key)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {_describe(exc, with_key=False)}") from None


# ---- helpers ------------------------------------------------------------------------------------------------------

def _owner(key: str) -> tuple[type, str]:
    """The class that declares the key's field (Settings, or a table's), and the field's name."""
    table, _, name = key.rpartition(".")
    return _TABLES[table] if table else Settings, name


def _field_type(key: str) -> Any:
    return field_type(*_owner(key))


def _get(settings: Settings, key: str) -> Any:
    table, _, name = key.rpartition(".")
    return getattr(getattr(settings, table) if table else settings, name)


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        table, _, name = key.rpartition(".")
        (nested.setdefault(table, {}) if table else nested)[name] = value
    return nested


def _did_you_mean(key: str) -> str:
    if "local." + key in KEYS:
        return f" (did you mean 'local.{key}', in the [local] table?)"
    close = difflib.get_close_matches(key, KEYS, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


_EXPECTED = {"int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
             "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
             "bool_parsing": "true or false", "string_type": "a string", "list_type": "an array of strings",
             "model_type": "a table", "dict_type": "a table"}
_TOML_TYPES = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}


def _describe(exc: ValidationError, *, with_key: bool) -> str:
    errors = exc.errors()
    err = errors[0]
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
    if err["type"] == "extra_forbidden":
        return f"unknown key '{key}'{_did_you_mean(key)}"
    if err["type"] == "value_error":  # a check of our own; it may name the key itself (an MCP server's)
        said = str(err["ctx"]["error"])
        return said if said.startswith(key + ".") else f"{key + ': ' if with_key and key else ''}{said}"
    if err["type"] == "literal_error":
        expected = "one of " + err["ctx"]["expected"]
    else:
        expected = _EXPECTED.get(err["type"]) or "a value " + err["msg"].removeprefix("Input should be ")
    value = err["input"]
    found = _TOML_TYPES.get(type(value), type(value).__name__)
    if key != "api_key" and not isinstance(value, dict | list):
        shown = repr(value)
        found += " " + (shown if len(shown) <= 40 else shown[:37] + "...")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{key + ': ' if with_key else ''}expected {expected}, found {found}{more}"


# ---- rendering ----------------------------------------------------------------------------------------------------

def render_show(loaded: Loaded) -> str:
    """The effective settings as `key = value  # source` lines (valid TOML); unset keys are commented out."""
    lines = []
    for key in KEYS:
        value, source = _get(loaded.settings, key), loaded.sources[key]
        if value is None:
            lines.append(f"# {key} = (not set)  # {source}")
        elif key.partition(".")[0] in USER_ONLY_TABLES and "." in key:  # only the user config may set it
            lines.append(f"# {key} = {_toml_value(value)}  # {source}; user config only")
        else:
            lines.append(f"{key} = {_toml_value(value)}  # {source}")
    return "\n".join(lines)


def render_paths(loaded: Loaded) -> str:
    width = max(len(label) for label, _, _ in loaded.files)
    return "\n".join(f"{label:<{width}}  {path}  ({'exists' if exists else 'missing'})"
                     for label, path, exists in loaded.files)


def _toml_value(value: Any) -> str:
    if isinstance(value, Secret):
        value = mask_secret(value.get_secret_value())
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")
