"""`config show` and `config paths`: the effective settings, each with where it came from, and the files read."""

from __future__ import annotations

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
