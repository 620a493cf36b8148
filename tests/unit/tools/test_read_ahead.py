"""Read-only calls of one reply run at the same time; their results come back in the order the model gave them,
and a read after an edit of the same turn sees the edit."""

from __future__ import annotations

import threading
from pathlib import Path

from agentkit import call, make_agent, run

from cli_agent.contracts.events import ToolResult
from cli_agent.contracts.messages import ToolCall
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.dispatch import Dispatcher
from cli_agent.tools.registry import Registry


def test_leading_reads_overlap_in_time(tmp_path: Path) -> None:
    for n in range(4):
        (tmp_path / f"f{n}.txt").write_text(f"file {n}\n")
    registry = Registry.builtin()
    seen: list[str] = []
    inside = threading.Barrier(4, timeout=10)  # passes only if all four reads are running at once

    def read_file(ctx: ToolContext, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        inside.wait()
        seen.append(path)
        return ctx.workspace.read_bytes(path).decode()

    slow = Registry(registry.specs(), {**{s.name: registry.handler(s.name) for s in registry.specs()},
                                       "read_file": read_file})
    dispatcher = Dispatcher(slow, ToolContext(Workspace(tmp_path)))
    calls = [ToolCall(f"c{n}", "read_file", {"path": f"f{n}.txt"}, "{}") for n in range(4)]
    done = dispatcher.read_ahead(calls)
    assert [done[n][1].data for n in range(4)] == [f"file {n}\n" for n in range(4)]
    assert sorted(seen) == [f"f{n}.txt" for n in range(4)]


def test_results_keep_the_model_order_and_reads_after_an_edit_see_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    (tmp_path / "b.txt").write_text("two\n")
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("read_file", path="b.txt"), call("read_file", path="a.txt"),
                        call("edit_file", path="a.txt", old="one", new="uno"), call("read_file", path="a.txt")]},
        {"text": "done"}], yes=True)
    events, finished = run(agent, "go")
    results = [e for e in events if isinstance(e, ToolResult)]
    assert finished.exit_code == 0
    assert [r.tool for r in results] == ["read_file", "read_file", "edit_file", "read_file"]
    texts = [str(r.envelope.data) for r in results]
    assert "two" in texts[0] and "one" in texts[1] and "uno" in texts[3]
