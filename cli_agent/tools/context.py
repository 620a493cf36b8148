"""What every tool handler gets besides its arguments: the workspace, the limits, the run's deadline, and the
conversation's state that some tools need: the files read so far (`SeenFiles`) and how commands run
(`CommandSetup`, made from the settings by `command_setup`). A session's builder makes both; the handlers read them."""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import os
import time
from dataclasses import field
from typing import TYPE_CHECKING

from cli_agent.config import NetworkRules, PermissionRule
from cli_agent.contracts import dataclass
from cli_agent.sandbox import NetRules, Policy, Processes, SessionNet, confine_locks, probe

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.fs import Workspace
    from cli_agent.sandbox import Capability, Policy
    from cli_agent.tools.web.address import WebSetup

__all__ = ["CommandSetup", "SeenFiles", "ToolContext", "ToolLimits", "command_setup"]


@dataclass(frozen=True)
class CommandSetup:
    """How commands run in this session: `capability` None means unsandboxed (the explicit opt-out)."""

    capability: Capability | None
    policy: Policy
    default_timeout_s: float = 120.0
    max_timeout_s: float = 600.0
    env_allow: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # one line each, shown once per session (a refused lock)
    net: SessionNet | None = None  # the network by rule (None: `sandbox.network = true`, or no sandbox)
    processes: Processes | None = None  # the session's background processes (None: no sandbox, none may start)


def command_setup(settings: Settings, workspace: Workspace) -> CommandSetup | None:
    """How this session runs commands; None when no sandbox can be set up here (then run_command isn't offered).
    Locks naming a literal path inside the workspace are bound read-only too (`confine`: the others are refused,
    each with a note); every lock is refused in a change set anyway."""
    box = settings.sandbox
    locks = confine_locks(workspace.root, workspace.locks)
    whole_net = box.network is True
    policy = Policy(workspace=workspace.root, network=whole_net, read_paths=tuple(box.read_paths),
                    write_paths=tuple(box.write_paths), read_only=(".git", ".cli-agent", *locks.paths))
    capability = None
    if box.mode != "off":
        capability = probe()
        if not capability.available:
            return None
    net = None if capability is None or whole_net else session_net(box.network, settings.permissions)
    processes = None if capability is None else Processes(capability, policy, box.env_allow, net=net)
    notes = (*locks.notes, *(write_notes(policy) if capability is not None else ()))
    return CommandSetup(capability, policy, settings.command_timeout, settings.command_timeout_max,
                        tuple(box.env_allow), notes=notes, processes=processes, net=net)


def write_notes(policy: Policy) -> list[str]:
    """One line naming the folders outside the workspace that commands change in place (`[sandbox] write_paths`),
    and one for each listed folder that is not bound, with why."""
    bound = policy.writable()
    notes = [f"commands may change {', '.join(map(str, bound))} in place: not staged, not undoable "
             f"([sandbox] write_paths)"] if bound else []
    kept = {str(p) for p in bound}
    for raw in policy.write_paths:
        if os.path.realpath(os.path.expanduser(raw)) not in kept:
            notes.append(f"[sandbox] write_paths {raw!r} is not writable by commands: it is no folder, holds or lies "
                         f"in the workspace, or is a kernel tree")
    return notes


def session_net(network: bool | NetworkRules, permissions: list[PermissionRule] | None = None) -> SessionNet:
    """The session's network by rule: the user's `[sandbox.network]` rules and presets (none: nothing allowed), and
    the `domains` of the `[[permissions]]` rules for commands (`command_domains`)."""
    rules = network if isinstance(network, NetworkRules) else NetworkRules()
    allowed, denied = command_domains(permissions or [])
    return SessionNet(NetRules(tuple(rules.allow), tuple(rules.presets), allowed, denied))


_DONE = {"allow": "allowed", "deny": "denied"}
Domains = tuple[tuple[str, str], ...]  # (domain, the rule that says so)


def command_domains(permissions: list[PermissionRule]) -> tuple[Domains, Domains]:
    """((domain, why) allowed, (domain, why) denied): the `domains` of the allow and deny rules whose tool is
    "network" or matches run_command; a domain that is no host, host:port or *.domain is left out."""
    found: dict[str, list[tuple[str, str]]] = {"allow": [], "deny": []}
    for rule in permissions:
        if not rule.domains or rule.decision not in found or not (
                rule.tool == "network" or fnmatch.fnmatchcase("run_command", rule.tool)):
            continue
        why = f"{_DONE[rule.decision]} by rule {rule.describe()}" + (f" ({rule.reason})" if rule.reason else "")
        found[rule.decision] += [(d, why) for d in rule.domains if NetRules.valid(d)]
    return tuple(found["allow"]), tuple(found["deny"])


def digest(data: bytes) -> str:
    """What identifies a file's bytes as they were shown."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class SeenFiles:
    """Read before you edit: which files the model has seen in this conversation (one per conversation; the agent
    clears it with the conversation). read_file, create_file, write_file and the task's files shown up front note
    a file; `tools.handlers.seen.require_seen` refuses an edit of one not noted. `tools run` and workflow steps
    have no conversation: their context has no `SeenFiles`."""

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self._shown: dict[str, str] = {}  # path -> digest of the bytes last shown with line numbers
        self.instructions: set[str] = set()  # nested instruction files (pkg/AGENTS.md) shown next to a result

    def note(self, rel: str, data: bytes | None = None) -> None:
        """`rel` was seen; with `data`, shown whole with line numbers as these bytes (line edits may use them)."""
        self.paths.add(rel)
        if data is not None:
            self._shown[rel] = digest(data)

    def numbered(self, rel: str, data: bytes) -> None:
        """Line numbers of `rel` (as these bytes) were shown, but not necessarily its text (a repository map's
        definitions): line edits may use them; an edit of its text still needs it read."""
        self._shown[rel] = digest(data)

    def shown_as(self, rel: str) -> str | None:
        """The digest of the bytes `rel` was last shown as with line numbers (None: never)."""
        return self._shown.get(rel)

    def __contains__(self, rel: object) -> bool:
        return rel in self.paths

    def clear(self) -> None:
        self.paths.clear()
        self._shown.clear()
        self.instructions.clear()


@dataclass(frozen=True)
class ToolLimits:
    read_max_bytes: int = 256 * 1024  # read_file returns at most this much text, with a truncation notice
    list_max_entries: int = 1000
    search_max_results: int = 200  # matching lines shown; all of them are counted
    search_timeout_s: float = 120.0  # one search's limit (the run's own deadline applies too)
    search_engine: str = "auto"  # "auto": ripgrep when it can run the pattern, else Python; "python": Python only


@dataclass(frozen=True)
class ToolContext:
    workspace: Workspace
    limits: ToolLimits = field(default_factory=ToolLimits)
    commands: CommandSetup | None = None  # how run_command runs; None: it is not offered
    deadline: float | None = None  # the run's deadline (time.monotonic()), when a run is under way
    seen: SeenFiles | None = None  # a conversation's files read so far: edits need them read (None: no check)
    loose_edits: bool = True  # edit_file's forgiving matching (cli_agent.tools.handlers.loose_match)
    syntax_check: bool = True  # a change that leaves a Python file unparseable is refused (tools.syntax_guard)
    web: WebSetup | None = None  # how web_fetch reaches the web (None: the defaults, private addresses refused)

    def at(self, deadline: float | None) -> ToolContext:
        """This context bound to a run's deadline."""
        return self if deadline == self.deadline else dataclasses.replace(self, deadline=deadline)

    def deadline_within(self, seconds: float) -> float:
        """The earlier of `seconds` from now and the run's deadline."""
        own = time.monotonic() + seconds
        return own if self.deadline is None else min(own, self.deadline)
