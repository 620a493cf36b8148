"""Tools about the run itself rather than the workspace: `update_plan` (the checklist the user watches) and `task`
(a sub-task in a conversation of its own, which the loop runs: see `cli_agent.agent.approval_flow`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cli_agent.contracts import ToolError

if TYPE_CHECKING:
    from cli_agent.tools.context import ToolContext


def update_plan(ctx: ToolContext, steps: list[dict[str, str]], explanation: str | None = None) -> dict[str, Any]:
    """The plan as it now stands (the loop shows it: the `PlanUpdated` event)."""
    doing = [s["step"] for s in steps if s["status"] == "in_progress"]
    if len(doing) > 1:
        raise ToolError(f"{len(doing)} steps are in_progress ({'; '.join(doing[:3])}): at most one may be; mark the "
                        f"others pending or completed")
    plan = [{"step": " ".join(s["step"].split()), "status": s["status"]} for s in steps]
    done = sum(1 for s in plan if s["status"] == "completed")
    data: dict[str, Any] = {"plan": plan, "summary": f"{done} of {len(plan)} steps completed"}
    if explanation:
        data["explanation"] = explanation.strip()
    return data


def task(ctx: ToolContext, description: str, prompt: str, agent: str | None = None) -> dict[str, Any]:
    """Run only by the agent loop, which gives the sub-task a conversation of its own."""
    raise ToolError("task runs only inside an agent run (cli-agent -p, the REPL, or an ACP session), which gives "
                    "the sub-task a conversation of its own")
