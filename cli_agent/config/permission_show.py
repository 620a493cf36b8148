"""What `cli-agent permissions` and `/permissions` print: every rule with its file and line, and which rule decides
a call (`permissions check TOOL JSON_ARGS`) and why."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from cli_agent.config.permission_files import rule_toml
from cli_agent.config.permissions import PermissionRule, Subject, decide

__all__ = ["explain_call", "render_rules", "subject_for"]

_PATH_ARGS = ("path", "source", "destination", "old_path", "new_path")


def render_rules(rules: list[PermissionRule] | tuple[PermissionRule, ...], notes: tuple[str, ...] = ()) -> str:
    """Every rule, in the order it is checked within its decision (deny, then ask, then allow), with its file and
    line; then the notes of the load (an untrusted project's allow rules ignored)."""
    if not rules:
        lines = ["no [[permissions]] rules: the approval mode (--mode, /approval) and your answers decide"]
    else:
        lines = [f"{len(rules)} rule(s); deny rules are checked first, then ask, then allow:"]
        for decision in ("deny", "ask", "allow"):
            for found in (r for r in rules if r.decision == decision):
                kind, _, line = found.origin.rpartition(":")
                where = f"{kind or found.origin}, {found.file}:{line}" if found.file else found.origin
                lines.append(f"  {decision:<5}  {found.label}  ({where})")
                if found.reason:
                    lines.append(f"         reason: {found.reason}")
    lines.extend(f"note: {note}" for note in notes)
    return "\n".join(lines)


def subject_for(tool: str, arguments: dict[str, Any]) -> Subject:
    """What the rules would look at in a call of `tool` with `arguments`, without running it."""
    command = arguments.get("command") if tool == "run_command" else None
    paths = tuple(str(arguments[k]).removeprefix("./") for k in _PATH_ARGS if isinstance(arguments.get(k), str))
    url = arguments.get("url")
    host = (urlsplit(url).hostname or None) if isinstance(url, str) else None
    return Subject(tool, command=command if isinstance(command, str) else None, paths=paths, host=host)


def explain_call(rules: list[PermissionRule] | tuple[PermissionRule, ...], subject: Subject) -> tuple[str, str]:
    """(decision, why): the rule that decides the call and what it says, or "none" when no rule matches."""
    found = decide(tuple(rules), subject)
    if found is None:
        return "none", (f"no rule matches {subject.tool}: the approval mode (--mode, /approval) and your answers "
                        f"decide it")
    why = f"\nreason: {found.reason}" if found.reason else ""
    table = "\n".join("  " + line for line in rule_toml(found).splitlines())
    return found.decision, f"{found.decision}: rule {found.describe()} decides it{why}\n{table}"
