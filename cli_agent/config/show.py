"""`config show` and `config paths`: the effective settings, each with where it came from (the hooks, MCP servers
and agent types as TOML tables at the end, with the notes on what an untrusted folder's config brought and was
ignored), and the files read."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from cli_agent.config.settings import KEYS, USER_ONLY_TABLES, mask_secret, value_of
from cli_agent.validated import Secret

if TYPE_CHECKING:
    from cli_agent.config.loading import Loaded

__all__ = ["render_paths", "render_show"]


def render_show(loaded: Loaded) -> str:
    """The effective settings as `key = value  # source` lines (valid TOML); unset keys are commented out."""
    lines = []
    for key in KEYS:
        value, source = value_of(loaded.settings, key), loaded.sources[key]
        if value is None:
            lines.append(f"# {key} = (not set)  # {source}")
        elif key.partition(".")[0] in USER_ONLY_TABLES and "." in key:  # only the user config may set it
            lines.append(f"# {key} = {_toml_value(value)}  # {source}; user config only")
        else:
            lines.append(f"{key} = {_toml_value(value)}  # {source}")
    return "\n".join([*lines, *_tables(loaded)])


def _tables(loaded: Loaded) -> list[str]:
    """The hooks, MCP servers and agent types in force, each table with the file it came from; then the notes (an
    untrusted project config's hooks, named and not run)."""
    settings, lines = loaded.settings, []
    for hook in settings.hooks:
        where = "project config (runs in the sandbox)" if hook.sandboxed else "user config or --config"
        lines += ["", f"[[hooks]]  # {where}",
                  *_fields({k: v for k, v in dataclasses.asdict(hook).items() if k != "sandboxed"})]
    for name, server in settings.mcp_servers.items():
        lines += ["", f"[mcp_servers.{json.dumps(name)}]  # {server.origin}",
                  *_fields({k: v for k, v in dataclasses.asdict(server).items() if k != "origin"})]
    for name, kind in settings.agents.items():
        lines += ["", f"[agents.{json.dumps(name)}]", *_fields(dataclasses.asdict(kind))]
    if not settings.hooks:
        lines.append("# hooks: none")
    return [*lines, *(f"# note: {note}" for note in loaded.notes)]


def _fields(values: dict[str, Any]) -> list[str]:
    out = []
    for key, value in values.items():
        if isinstance(value, dict):  # an MCP server's env and headers: their values masked, as an API key is
            shown = {k: _toml_value(v if key == "approval" else mask_secret(str(v))) for k, v in value.items()}
            value = "{" + ", ".join(f"{json.dumps(k)} = {v}" for k, v in shown.items()) + "}"
            out.append(f"{key} = {value}")
        elif value is not None:
            out.append(f"{key} = {_toml_value(value)}")
    return out


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
