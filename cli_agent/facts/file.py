"""The TOML files of the fact store (`facts.py`), as text: reading one, rendering one, writing one.

    facts = load(path, FactsModel)              # checked as the store's dataclass (`checked`); no file: FactsModel()
    text = appended(path, FactsModel, "facts", fact) or render_facts(locks, [*facts.facts, fact])
    write(dir_fd, "facts.toml", text)           # dir_fd: the `.cli-agent` folder, opened and locked by the store

`facts.toml` holds `[[facts]]` tables (id, text, author, time) and `[locks] paths = [globs]`; the user may edit it
by hand (a commit appends its table, so comments and layout survive). The draft holds `[[proposals]]` (id, text,
reason, time, proposed_by) and only the store writes it. A file is written atomically (a temporary file in the same
folder, fsync, rename) through the descriptor of the `.cli-agent` folder, which the store opens and locks. A broken
file raises ConfigError naming the file and the line.
"""

from __future__ import annotations

import dataclasses
import errno
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cli_agent.contracts import ConfigError
from cli_agent.fs import CONFIG_LIMIT, PROJECT_DIR, RegularFile, atomic, read_regular
from cli_agent.validated import load_checked, parse_toml, read_toml

_FACTS_HEADER = ("# Project facts for cli-agent: the model reads them as authoritative and can only propose new ones.\n"
                 "# `cli-agent facts` lists them; `cli-agent facts commit ID | reject ID` decides on proposals.\n"
                 "# [locks] paths: globs (.gitignore syntax) the agent may never change. Edit this file freely.\n")
_DRAFT_HEADER = ("# Facts proposed by the model, waiting for the user: `cli-agent facts commit ID` or `reject ID`.\n"
                 "# Written by cli-agent; committed facts live in facts.toml.\n")


# -- reading ---------------------------------------------------------------------------------------------------------

def load(path: Path, model: type[Any]) -> Any:
    """The file at `path` checked as `model`, or `model()` if there is none; ConfigError naming the line if broken."""
    if not path.exists():
        return model()
    return load_checked(model, read_toml(RegularFile(path), str(path), ConfigError), ConfigError)


# -- writing ---------------------------------------------------------------------------------------------------------

def render_facts(locks: Sequence[str], facts: Iterable[Any]) -> str:
    """A whole facts.toml, as the store writes it when appending to the user's file would not do."""
    paths = ", ".join(_toml_string(p) for p in locks)
    return _FACTS_HEADER + f"\n[locks]\npaths = [{paths}]\n" + tables("facts", facts)


def render_draft(next_id: int, proposals: Iterable[Any]) -> str:
    return _DRAFT_HEADER + f"next_id = {next_id}\n" + tables("proposals", proposals)


def appended(path: Path, model: type[Any], name: str, row: Any) -> str | None:
    """The file at `path` with a `[[name]]` table for `row` added at its end, so its comments and layout survive;
    None if there is no file, or if the result would not read back as `model` with `row` last."""
    try:
        old = read_regular(path, CONFIG_LIMIT).decode("utf-8")
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    text = old + ("" if old.endswith("\n") or not old else "\n") + tables(name, [row])
    try:
        if getattr(load_checked(model, parse_toml(text, str(path), ConfigError), ConfigError), name)[-1:] != [row]:
            return None
    except ConfigError:
        return None
    return text


def tables(name: str, rows: Iterable[Any]) -> str:
    """One `[[name]]` table per row, each after a blank line, its fields as strings in the model's order."""
    return "".join(f"\n[[{name}]]\n" + _toml_table(dataclasses.asdict(row)) for row in rows)


def write(dir_fd: int, name: str, text: str) -> None:
    """Replace the file `name` in the open `.cli-agent` folder atomically; ConfigError if that fails."""
    try:
        atomic.write(dir_fd, name, text.encode("utf-8"), 0o644, create=False)
    except OSError as exc:
        raise ConfigError(f"{PROJECT_DIR}/{name} was not written: {exc.strerror or exc}") from None


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_table(values: dict[str, Any]) -> str:
    return "".join(f"{key} = {_toml_string(value)}\n" for key, value in values.items())
