"""`propose_fact`: the model's only way into the project facts. It writes a proposal to the draft and nothing else;
the user commits it (`cli-agent facts commit ID`, `/facts`), which no model tool can do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cli_agent.contracts import CliAgentError, ToolError
from cli_agent.facts import FactStore

if TYPE_CHECKING:
    from cli_agent.tools.context import ToolContext


def propose_fact(ctx: ToolContext, text: str, reason: str) -> dict[str, Any]:
    try:
        proposal = FactStore(ctx.workspace.root).propose(text, reason)
    except CliAgentError as exc:
        raise ToolError(str(exc)) from None
    if proposal.proposed_by == "committed":
        return {"id": proposal.id, "status": "committed",
                "message": f"This is already project fact {proposal.id}; nothing to propose."}
    return {"id": proposal.id, "status": "pending",
            "message": f"Proposed as {proposal.id}. It is not a project fact until the user commits it; do not "
                       f"assume it is accepted."}
