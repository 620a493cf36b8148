"""Where `[[permissions]]` rules are written, and writing one ("always").

Rules come from the user config, the project config (trust-gated: until the folder is trusted only its `deny` and
`ask` rules count), `--config`, and the user's own rules for a project: a file in cli-agent's user state dir, keyed
by the folder, never inside the workspace (a repository could ship a file there). "Always" appends one
`[[permissions]]` table to the user config or to that file: what the file holds is kept byte for byte, and the new
file replaces the old atomically.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from cli_agent.config.permissions import PermissionRule, Subject, command_words, example_problem
from cli_agent.contracts import ConfigError, dataclass
from cli_agent.fs import CONFIG_LIMIT, RegularFile, atomic, paths, read_regular
from cli_agent.validated import TomlFile, load_checked, parse_toml, read_toml

__all__ = ["append_rule", "keep_rule", "own_rules_file", "rule_toml", "suggested_rule"]

OWN = "your rules for this project"
USER = "user config"
RULE_PLACES = {"user": USER, "project": OWN}  # where "always" may write a rule, and the name its origin takes


@dataclass(frozen=True)
class _OwnRules:
    """The file of the user's own rules for a project: `[[permissions]]` tables only."""

    permissions: list[PermissionRule] = field(default_factory=list)


def own_rules_file(workspace: Path) -> Path:
    """The user's own rules for the folder: in the user state dir, named by the folder's path."""
    real = Path(workspace).resolve()
    digest = hashlib.sha256(str(real).encode()).hexdigest()[:16]
    return paths.user_state_dir() / "permissions" / f"{real.name or 'root'}-{digest}.toml"


def rules_of(toml: TomlFile, kind: str, rules: list[PermissionRule]) -> list[PermissionRule]:
    """The file's `[[permissions]]` rules (checked as settings), each with its origin (`kind:LINE`); a ConfigError
    naming the rule when one of its own examples contradicts it."""
    placed = []
    for index, found in enumerate(rules):
        line = toml.line_of(("permissions", index))
        found = replace(found, origin=f"{kind}:{line}" if line else kind, file=toml.where)
        problem = example_problem(found)
        if problem is not None:
            raise ConfigError(toml.at(("permissions", index), f"rule {found.label!r}: {problem}"))
        placed.append(found)
    return placed


def own_rules(workspace: Path) -> list[PermissionRule]:
    """The user's own rules for the folder (none when the file is not there)."""
    path = own_rules_file(workspace)
    if not path.exists():
        return []
    toml = read_toml(RegularFile(path), str(path), ConfigError)
    model = load_checked(_OwnRules, toml, ConfigError, strict=True)
    return rules_of(toml, OWN, model.permissions)


def screened_rules(rules: list[PermissionRule], path: str) -> tuple[list[PermissionRule], str | None]:
    """An untrusted project's rules: its deny and ask rules, and the note that names the allow rules ignored."""
    allows = [r for r in rules if r.decision == "allow"]
    if not allows:
        return rules, None
    named = ", ".join(r.describe() for r in allows[:5]) + (f" and {len(allows) - 5} more" if len(allows) > 5 else "")
    return [r for r in rules if r.decision != "allow"], (
        f"ignored {len(allows)} allow rule(s) of the untrusted project config {path} ({named}): run `cli-agent "
        f"trust` in this folder, or pass --trust, to use them")


def suggested_rule(subject: Subject) -> PermissionRule:
    """The rule that would allow this call from now on: the command's first words, the file's folder, the site,
    else the tool."""
    if subject.command is not None:
        commands = command_words(subject.command) or ()
        first = commands[0] if commands else tuple(subject.command.split()[:1])
        words = list(first[:2]) if len(first) > 1 and not first[1].startswith("-") else list(first[:1])
        return PermissionRule(decision="allow", tool=subject.tool, prefix=words)
    if subject.paths:
        folders = sorted({str(Path(p).parent) for p in subject.paths})
        return PermissionRule(decision="allow", tool=subject.tool,
                              paths=[f"{f}/**" if f != "." else "*" for f in folders])
    if subject.host:
        return PermissionRule(decision="allow", tool=subject.tool, domains=[subject.host])
    return PermissionRule(decision="allow", tool=subject.tool)


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string or list of strings is a TOML one


def rule_toml(rule: PermissionRule) -> str:
    """The rule as a `[[permissions]]` table."""
    lines = ["[[permissions]]", f"decision = {_value(rule.decision)}", f"tool = {_value(rule.tool)}"]
    for key in ("name", "prefix", "paths", "domains", "reason", "match", "not_match"):
        value = getattr(rule, key)
        if value:
            lines.append(f"{key} = {_value(value)}")
    return "\n".join(lines) + "\n"


def append_rule(path: Path, rule: PermissionRule) -> None:
    """Add the rule at the end of the TOML file at `path` (made if missing), keeping what is there; atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        old = read_regular(path, CONFIG_LIMIT)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise ConfigError(f"can't read {path}: {exc.strerror or exc}") from None
        old = b""
    try:
        text = old.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; not adding the rule") from None
    joined = text + ("" if not text or text.endswith("\n") else "\n") + ("\n" if text else "") + rule_toml(rule)
    parse_toml(joined, str(path), ConfigError)  # a file that was not TOML is not made worse
    mode = os.stat(path).st_mode & 0o777 if old else 0o600
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        atomic.write(fd, path.name, joined.encode("utf-8"), mode, create=False)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise ConfigError(f"can't write {path}: the folder went away") from None
        raise ConfigError(f"can't write {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def keep_rule(workspace: Path, rule: PermissionRule, where: str) -> PermissionRule:
    """Write the rule ("always") to the user config (`where="user"`) or to the user's own rules for the folder
    (`"project"`); the rule as written, its origin and file set. Raises ConfigError when it cannot be written."""
    path = paths.user_config_file() if where == "user" else own_rules_file(workspace)
    append_rule(path, rule)
    return replace(rule, origin=RULE_PLACES.get(where, OWN), file=str(path))
