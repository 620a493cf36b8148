"""The layered loader of the settings (`config.settings`): flags > env > --config > project > user > defaults.

Each layer is validated on its own, so an error names the file (with the line and the key:
`.cli-agent/config.toml:3: max_steps: expected an integer, found string 'x'`), the variable or the flag it came
from, and `Loaded.sources` says where every effective value came from. The workspace (whose
`.cli-agent/config.toml` is the project layer) comes from the layers above and below it, never from the project
config itself.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any, get_origin
from urllib.parse import urlsplit

from cli_agent.config.hook_settings import hook_note
from cli_agent.config.mcp_settings import merge_servers
from cli_agent.config.permission_files import own_rules, rules_of, screened_rules
from cli_agent.config.settings import (
    KEYS,
    TABLES,
    USER_ONLY_TABLES,
    Settings,
    env_var,
    flag_name,
    key_type,
    nest,
    owner,
    value_of,
)
from cli_agent.config.trust import screen_project, trust_note, untrusted_note
from cli_agent.config.trusted_folders import TRUE, is_trusted
from cli_agent.contracts import ConfigError, dataclass
from cli_agent.fs import RegularFile, paths
from cli_agent.validated import TomlFile, check, load_checked, plainly_valid, problem_of, read_toml

__all__ = ["Loaded", "load_settings"]


@dataclass(frozen=True)
class Loaded:
    settings: Settings
    sources: dict[str, str]  # key (e.g. "max_steps", "local.model") -> where its value came from
    files: list[tuple[str, Path, bool]]  # (label, path, exists), in the order they are layered
    notes: tuple[str, ...] = ()  # one-line warnings for the user (a project config's ignored keys)
    withheld: dict[str, Any] = field(default_factory=dict)  # project keys ignored until the folder is trusted
    trust_note: str = ""  # the part of a note that asks to trust the folder for the withheld keys

    def declined(self) -> Loaded:
        """These settings once the user has just declined to trust the folder: its notes without the part that
        asks for trust (what was declined is not repeated; the other notes stay)."""
        if not self.trust_note:
            return self
        notes = (note.replace(self.trust_note + "; ", "").replace(self.trust_note, "") for note in self.notes)
        return replace(self, notes=tuple(note for note in notes if note), trust_note="")


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
    files: dict[str, TomlFile] = {}  # source label -> the file read
    if config_file is not None:
        config_file = Path(config_file).expanduser()
        if not config_file.exists():  # a FIFO or a device is there: the reader names what it is
            raise ConfigError(f"--config file not found: {config_file}")
        explicit = _file_layer(config_file, f"--config ({config_file})", files)
    user_path = paths.user_config_file()
    user = _file_layer(user_path, f"user config ({user_path})", files) if user_path.exists() else {}

    chosen = next((layer["workspace"] for layer in (flag_layer, env_layer, explicit, user) if "workspace" in layer),
                  None)
    base = (workspace or Path.cwd()).expanduser()
    ws = (base / Path(chosen[0]).expanduser()).resolve() if chosen else base.resolve()
    project_path = paths.project_config_file(ws)
    project: _Layer = {}
    notes: tuple[str, ...] = ()
    withheld: dict[str, Any] = {}
    asked = ""
    if project_path.exists():
        project = _file_layer(project_path, f"project config ({project_path})", files)
        project, withheld, notes, asked = _screened(project, user, project_path, ws, trust, env)

    for layer in (project, explicit):
        user_only = sorted({key for key in layer if key.partition(".")[0] in USER_ONLY_TABLES})
        if user_only:
            toml = files[layer[user_only[0]][1]]
            raise ConfigError(toml.at(tuple(user_only[0].split(".")), f"can be set only in the user config "
                                      f"({user_path})"))
    values: dict[str, Any] = {}
    sources = dict.fromkeys(KEYS, "default")
    for layer in (user, project, explicit, env_layer, flag_layer):
        for key, (value, source) in layer.items():
            if key not in ("mcp_servers", "hooks", "agents", "permissions"):  # merged below: by name, or added up
                values[key], sources[key] = value, source
    values["mcp_servers"], mcp_notes = _mcp_servers(user, project, explicit)
    values["hooks"] = [replace(hook, sandboxed=True) if layer is project else hook  # a project's: in the sandbox
                       for layer in (user, project, explicit) for hook in layer.get("hooks", ([], ""))[0]]
    values["permissions"] = [*(r for layer in (user, project, explicit)
                                for r in layer.get("permissions", ([], ""))[0]), *own_rules(ws)]
    values["agents"] = {name: kind for layer in (user, project, explicit)
                        for name, kind in layer.get("agents", ({}, ""))[0].items()}
    notes = (*notes, *mcp_notes)
    values["workspace"] = str(ws)
    values["config_files"] = tuple(str(p) for p in (user_path, project_path, config_file) if p is not None)
    read = [("user config", user_path, user_path.exists()), ("project config", project_path, project_path.exists())]
    if config_file is not None:
        read.append(("--config", config_file, True))
    return Loaded(_built(values), sources, read, notes, withheld, asked)


def _built(values: Mapping[str, Any]) -> Settings:
    """Settings of values that were checked layer by layer (`_Layer`): nothing is checked again."""
    nested = nest(values)
    tables = {table: model(**nested.pop(table, {})) for table, model in TABLES.items()}
    return Settings(**nested, **tables)


def _mcp_servers(user: _Layer, project: _Layer, explicit: _Layer) -> tuple[dict[str, Any], list[str]]:
    """The MCP servers of the config files, merged by name. A project's servers are in `project` only when the
    folder is trusted (`_screened` took them out otherwise, and said so)."""
    layers = [(layer["mcp_servers"][1], layer["mcp_servers"][0]) for layer in (user, project, explicit)
              if layer.get("mcp_servers", ({}, ""))[0]]
    if not layers:
        return {}, []

    return merge_servers(layers, project_trusted=True)


def _screened(project: _Layer, user: _Layer, path: Path, ws: Path, trust: bool | None,
              env: Mapping[str, str]) -> tuple[_Layer, dict[str, Any], tuple[str, ...], str]:
    """The project layer as the folder's trust allows: (kept layer, withheld key -> value, notes, the part of a
    note that asks for trust)."""
    defaults = Settings()
    below = {key: user[key][0] if key in user else value_of(defaults, key) for key in project}
    given = {key: value for key, (value, _) in project.items()}
    screened = screen_project(given, below, trusted=bool(trust))
    if screened.needs_trust and trust is None:
        trusted = env.get("CLI_AGENT_TRUST", "").strip().lower() in TRUE or is_trusted(ws)
        if trusted:
            screened = screen_project(given, below, trusted=True)
    withheld = {key: given[key] for key in screened.needs_trust}
    rules = withheld.pop("permissions", None)
    rule_note = None
    if rules is not None:  # its deny and ask rules count; its allow rules are named, once
        kept_rules, rule_note = screened_rules(rules, str(path))
        withheld["permissions"] = [r for r in rules if r not in kept_rules]
        project = {**project, "permissions": (kept_rules, project["permissions"][1])}
        screened = replace(screened, kept=(*screened.kept, "permissions"),
                           needs_trust=tuple(k for k in screened.needs_trust if k != "permissions"))
    hooks = withheld.get("hooks")
    if hooks:  # named, once, in a line of their own: they would run commands

        screened = replace(screened, needs_trust=tuple(k for k in screened.needs_trust if k != "hooks"))
    note = untrusted_note(str(path), screened)
    notes = (*((note,) if note else ()), *((hook_note(str(path), hooks),) if hooks else ()),
             *((rule_note,) if rule_note else ()))
    return {key: project[key] for key in screened.kept}, withheld, notes, trust_note(str(path), screened) or ""


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
    if get_origin(key_type(key)) is not list:
        return raw
    raw = raw.strip()
    if not raw.startswith("["):
        return [item.strip() for item in raw.split(",") if item.strip()]
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: expected a comma-separated list or a JSON array, found invalid JSON "
                          f"({exc.msg} at column {exc.colno})") from None


def _file_layer(path: Path, label: str, files: dict[str, TomlFile]) -> _Layer:
    """The keys a config file sets, checked, each with `label` as its source; the file kept in `files`."""
    toml = files[label] = read_toml(RegularFile(path), str(path), ConfigError)
    data = toml.data
    if "config_files" in data:
        raise ConfigError(toml.at(("config_files",), "unknown key"))
    if isinstance(data.get("sandbox"), str):  # sandbox = "off" is [sandbox] mode = "off"
        data["sandbox"] = {"mode": data["sandbox"]}
    model = load_checked(Settings, toml, ConfigError, strict=True, suggest=_in_a_table)
    if model.permissions:
        model = replace(model, permissions=rules_of(toml, label.split(" (")[0], model.permissions))
    problem = _url_problem("api_base", data.get("api_base"))
    if problem is not None:
        raise ConfigError(toml.at(("api_base",), problem))
    keys = [k for k in data if k not in TABLES]  # mcp_servers: whole
    keys += [f"{t}.{k}" for t in TABLES if isinstance(data.get(t), dict) for k in data[t]]
    return {key: (value_of(model, key), label) for key in keys}


def _url_problem(key: str, value: Any) -> str | None:
    """What is wrong with an `api_base` (a URL with its scheme: `localhost:8080` would fail only at the first
    request); None for any other key."""
    if key != "api_base" or not isinstance(value, str):
        return None

    parts = urlsplit(value.strip())
    if parts.scheme in ("http", "https") and parts.netloc:
        return None
    rest = value.strip().split("://")[-1]
    return f"expected a URL starting with http:// or https://, found {value!r}" + (
        f" (did you mean 'http://{rest}'?)" if rest else "")


def _validate_one(key: str, value: Any, where: str) -> Any:
    problem = _url_problem(key, value)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    if plainly_valid(*owner(key), value):  # most flags: pydantic is not imported
        return value
    from pydantic import ValidationError  # deferred: pydantic (40 ms), only when a config file is checked

    data = nest({key: value})
    try:
        return value_of(check(Settings, data), key)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {problem_of(exc, Settings, data).message}") from None


def _in_a_table(key: str) -> str | None:
    """The hint for a table's key written at the top (`threads` for `local.threads`)."""
    table = next((t for t in TABLES if f"{t}.{key}" in KEYS), None)
    return f" (did you mean '{table}.{key}', in the [{table}] table?)" if table else None


def _did_you_mean(key: str) -> str:
    close = difflib.get_close_matches(key, KEYS, n=1)
    return _in_a_table(key) or (f" (did you mean '{close[0]}'?)" if close else "")
