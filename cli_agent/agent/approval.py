"""Approval as data plus one pure function.

`assess(request, policy)` says whether a tool call may run (allow), needs a person's answer (ask), or is refused
(deny, with the rule that would have allowed it). The interactive question itself lives in `ui/`; protected and
locked paths never get this far: the sandbox refuses them whatever the policy says.
"""

from __future__ import annotations

import enum
from dataclasses import field, replace
from typing import Literal

from cli_agent.config import PermissionRule, Subject, decide
from cli_agent.contracts import ChangeKind, dataclass

__all__ = ["ApprovalMode", "Policy", "Verdict", "assess"]


class ApprovalMode(enum.StrEnum):
    ASK = "ask"  # every change is asked for
    EDITS = "edits"  # creating and editing files is approved; deleting is asked for
    ALL = "all"  # every change is approved
    PLAN = "plan"  # read only: nothing changes until the user approves the plan


class Verdict(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class Policy:
    mode: ApprovalMode = ApprovalMode.ASK
    interactive: bool = True  # someone can be asked
    yes: bool = False  # --yes
    granted_tools: frozenset[str] = field(default_factory=frozenset)  # "t" answers in this session
    ask_commands: bool = False  # commands = "ask": a sandboxed command is asked for before it runs
    unsandboxed: bool = False  # sandbox = "off": every command is asked for, whatever was granted
    granted_scopes: frozenset[tuple[str, str]] = field(default_factory=frozenset)  # (tool, host) by "a" answers
    rules: tuple[PermissionRule, ...] = ()  # [[permissions]]: deny, then ask, then allow, before all the above

    def grant_tool(self, tool: str) -> Policy:
        return replace(self, granted_tools=self.granted_tools | {tool})

    def grant_scope(self, tool: str, scope: str) -> Policy:
        return replace(self, granted_scopes=self.granted_scopes | {(tool, scope)})

    def grant_all(self) -> Policy:
        return replace(self, mode=ApprovalMode.ALL)

    def with_mode(self, mode: ApprovalMode) -> Policy:
        return replace(self, mode=mode)

    def with_rule(self, rule: PermissionRule) -> Policy:
        return replace(self, rules=(*self.rules, rule))


@dataclass(frozen=True)
class CallFacts:
    """What the policy looks at: the tool, whether its spec needs approval, and the kind of change."""

    tool: str
    requires_approval: bool
    kind: ChangeKind | Literal["command"] | None = None  # "command": running a command, before its changes
    scope: str = ""  # what an "a" answer grants for the session instead of everything (web_fetch: the URL's host)
    subject: Subject | None = None  # what the [[permissions]] rules look at (its command, paths, host)


@dataclass(frozen=True)
class Assessment:
    verdict: Verdict
    rule: str  # the rule that allowed or denied; for a denial, what would have allowed it
    by_rule: PermissionRule | None = None  # the [[permissions]] rule that decided


def by_rule(call: CallFacts, policy: Policy) -> Assessment | None:
    """What the [[permissions]] rules say about the call (None: no rule matches). A deny holds even with --yes;
    an ask asks (--yes answers it; with no one to ask it is refused)."""
    if not policy.rules:
        return None
    found = decide(policy.rules, call.subject or Subject(call.tool))
    if found is None:
        return None
    why = f" ({found.reason})" if found.reason else ""
    if found.decision == "deny":
        return Assessment(Verdict.DENY, f"denied by rule {found.describe()}{why}", found)
    if found.decision == "allow":
        return Assessment(Verdict.ALLOW, f"allowed by rule {found.describe()}{why}", found)
    if policy.yes:
        return Assessment(Verdict.ALLOW, f"--yes answered rule {found.describe()}{why}", found)
    if policy.interactive:
        return Assessment(Verdict.ASK, f"asked by rule {found.describe()}{why}", found)
    return Assessment(Verdict.DENY, f"asked by rule {found.describe()}{why}, and no one can be asked", found)


def assess(call: CallFacts, policy: Policy) -> Assessment:
    ruled = by_rule(call, policy)
    if ruled is not None:
        return ruled
    if policy.mode is ApprovalMode.PLAN and (call.kind is not None or call.requires_approval):
        return Assessment(Verdict.DENY, "plan mode: nothing changes until the plan is approved")
    if call.kind == "command":
        return _assess_command(call, policy)
    if not call.requires_approval:
        return Assessment(Verdict.ALLOW, f"{call.tool} needs no approval")
    if policy.yes:
        return Assessment(Verdict.ALLOW, "--yes")
    if policy.mode is ApprovalMode.ALL:
        return Assessment(Verdict.ALLOW, 'approval = "all"')
    if call.tool in policy.granted_tools:
        return Assessment(Verdict.ALLOW, f"{call.tool} approved for this session")
    if call.scope and (call.tool, call.scope) in policy.granted_scopes:
        return Assessment(Verdict.ALLOW, f"{call.tool} to {call.scope} approved for this session")
    if policy.mode is ApprovalMode.EDITS and call.kind in ("create", "edit", "write"):
        return Assessment(Verdict.ALLOW, 'approval = "edits"')
    if policy.interactive:
        return Assessment(Verdict.ASK, "asks the user")
    if call.kind in ("create", "edit", "write"):
        would = '--yes (or approval = "edits" or "all" in config)'
    else:
        would = '--yes (or approval = "all" in config)'
    return Assessment(Verdict.DENY, would)


def _assess_command(call: CallFacts, policy: Policy) -> Assessment:
    """Running a command. In the sandbox it changes nothing real (its change set is assessed on its own), so it runs
    unasked unless commands = "ask"; without a sandbox (sandbox = "off") it is asked for every time."""
    if not policy.ask_commands and not policy.unsandboxed:
        return Assessment(Verdict.ALLOW, "sandboxed: only its file changes need approval")
    if policy.yes:
        return Assessment(Verdict.ALLOW, "--yes")
    if not policy.unsandboxed and (policy.mode is ApprovalMode.ALL or call.tool in policy.granted_tools):
        return Assessment(Verdict.ALLOW, 'approval = "all"' if policy.mode is ApprovalMode.ALL else
                          f"{call.tool} approved for this session")
    if policy.interactive:
        return Assessment(Verdict.ASK, "asks the user")
    return Assessment(Verdict.DENY, "--yes" + ("" if policy.unsandboxed else ' (or commands = "auto" in config)'))
