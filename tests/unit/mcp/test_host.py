"""MCP servers keep the host out: a server never imports from the workspace by accident, tool names that are not
plain identifiers are refused, a server's stderr log stays small, and a call and the check of its arguments end at
the run's deadline. Real servers (tests/mcp_servers/), real runs."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from clikit import user_config
from mcpkit import call, one_shot, warnings
from places import MCP_SERVERS

from cli_agent.cli.main import run
from cli_agent.history.trace import read_trace
from cli_agent.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.usefixtures("isolated_home")

SERVERS = MCP_SERVERS




def server_table(name: str, args: list[str], extra: str = "") -> str:
    return f'[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps(args)}\n{extra}\n'


def results(trace: Path) -> list[dict]:
    return [e.to_dict()["envelope"] for e in read_trace(trace).events if e.type == "tool_result"]


def offered(provider: ScriptedProvider) -> set[str]:
    return {t["function"]["name"] for t in provider.requests[0].tools or ()}


@pytest.mark.slow
def test_a_server_started_in_the_workspace_does_not_import_the_workspace_s_modules(ws, tmp_path, isolated_home,
                                                                                    monkeypatch):
    # `python -c` puts the current folder first on the module path, as `python -m` does: a repository's
    # anyio.py would run in place of the real one, outside any sandbox
    marker = tmp_path / "workspace-code-ran"
    (ws / "anyio.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit('planted module')\n")
    start = ("import runpy, sys; sys.argv = ['demo']; "
             f"runpy.run_path({str(SERVERS / 'demo.py')!r}, run_name='__main__')")
    user_config(isolated_home, server_table("demo", ["-c", start], 'approval = "never"'))
    monkeypatch.chdir(ws)  # cli-agent started in the repository, as it usually is
    trace = tmp_path / "t.jsonl"
    code, _ = one_shot(ws, trace, call("demo__add", a=2, b=3), {"text": "ok"})
    assert not marker.exists(), "the server imported a module from the workspace"
    assert code == 0 and results(trace)[0]["ok"] and results(trace)[0]["data"]["text"] == "5", warnings(trace)


def test_a_configured_cwd_is_where_the_server_runs(tmp_path):
    from cli_agent.config.mcp_settings import McpServer
    from cli_agent.mcp.connect import working_folder

    private = tmp_path / "private"
    assert working_folder(McpServer(command="x"), private) == private and private.is_dir()
    assert working_folder(McpServer(command="x", cwd=str(tmp_path)), private) == tmp_path


@pytest.mark.slow
def test_tool_names_that_are_not_plain_identifiers_are_refused_with_a_note(ws, tmp_path, isolated_home, capsys):
    user_config(isolated_home, server_table("raw", [str(SERVERS / "raw.py"), "badnames"], 'approval = "never"'))
    trace = tmp_path / "t.jsonl"
    code, provider = one_shot(ws, trace, call("raw__echo", text="still works"), {"text": "ok"})
    assert code == 0 and results(trace)[0]["ok"]
    assert {n for n in offered(provider) if n.startswith("raw__")} == {"raw__echo"}
    refused = [w for w in warnings(trace) if "was refused" in w]
    assert len(refused) == 8, warnings(trace)
    assert all("\x1b" not in w and "\n" not in w and len(w) < 300 for w in refused)
    capsys.readouterr()
    assert run(["mcp", "list", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in listed["tools"]] == ["raw__echo"] and len(listed["refused"]) == 8
    assert run(["mcp", "list"]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "raw__echo" in shown and "was refused" in shown


@pytest.mark.slow
def test_a_chatty_server_s_stderr_log_is_capped_and_rotated(ws, tmp_path, isolated_home):
    from cli_agent.mcp.attach import log_dir
    from cli_agent.mcp.server_log import MAX_LOG_BYTES

    user_config(isolated_home, server_table("chatty", [str(SERVERS / "raw.py"), "chatty"], 'approval = "never"'))
    trace = tmp_path / "t.jsonl"
    code, _ = one_shot(ws, trace, call("chatty__echo", text="heard"), {"text": "ok"})
    assert code == 0 and results(trace)[0]["data"]["text"] == "heard"
    logs = sorted(log_dir().glob("chatty.log*"))  # the server wrote 40 MB
    assert [p.name for p in logs] == ["chatty.log", "chatty.log.1"]
    assert all(p.stat().st_size <= MAX_LOG_BYTES for p in logs)
    assert logs[0].read_text().startswith("chatter")


def test_the_log_keeps_the_last_lines_of_a_short_stderr(tmp_path):
    from cli_agent.mcp.server_log import ServerLog

    log = ServerLog(tmp_path / "s.log", limit=100)
    for n in range(30):
        log.writer.write(f"line {n}\n")
        log.writer.flush()
    log.writer.write("".join(f"burst {n}\n" for n in range(100)))  # one write over the limit keeps its end
    log.close()
    assert (tmp_path / "s.log").read_text().endswith("burst 99\n")
    assert sorted(p.name for p in tmp_path.iterdir()) in (["s.log"], ["s.log", "s.log.1"])
    assert all(p.stat().st_size <= 100 for p in tmp_path.iterdir())


@pytest.mark.slow
def test_a_call_ends_at_the_run_s_deadline(ws, tmp_path, isolated_home):
    user_config(isolated_home, server_table("demo", [str(SERVERS / "demo.py")], 'approval = "never"\ntimeout_s = 120'))
    trace = tmp_path / "t.jsonl"
    started = time.monotonic()
    # 20 s: the server is ready within them on a loaded machine too (6 s once left it still starting, the tool unknown)
    code, _ = one_shot(ws, trace, call("demo__sleep", seconds=90), {"text": "never reached"}, flags=["--timeout", "20"])
    took = time.monotonic() - started
    assert code == 5, warnings(trace)
    assert took < 60, f"the run took {took:.1f} s with --timeout 20"  # loaded machines allowed; the call sleeps 90 s
    [slept] = results(trace)
    assert not slept["ok"] and "deadline" in slept["errors"][0]


@pytest.mark.slow
def test_a_backtracking_pattern_in_a_server_s_schema_costs_milliseconds(ws, tmp_path, isolated_home):
    user_config(isolated_home, server_table("redos", [str(SERVERS / "raw.py"), "redos"], 'approval = "never"'))
    trace = tmp_path / "t.jsonl"
    started = time.monotonic()
    hostile = "a" * 31 + "!"
    code, _ = one_shot(ws, trace, call("redos__echo", text=hostile), call("redos__alt", text="a" * 26 + "!"),
                       call("redos__echo", text="aaaa"), call("redos__alt", text="aaaa"), {"text": "ok"},
                       flags=["--timeout", "120"])
    took = time.monotonic() - started
    assert code == 0
    nested, alternated, fine, also_fine = results(trace)
    assert not nested["ok"] and "^(a+)+$" in nested["errors"][0]
    assert not alternated["ok"] and "took too long" in alternated["errors"][0], alternated
    assert fine["ok"] and fine["data"]["text"] == "aaaa" and also_fine["ok"]
    # only a hang fails here (unbounded, `^(a+)+$` against 31 characters backtracks for minutes): the errors above
    # show each pattern was stopped at its limit
    assert took < 120, f"checking the arguments took {took:.1f} s"


@pytest.mark.slow
def test_a_server_still_starting_does_not_hold_a_run_past_its_timeout(ws, tmp_path, isolated_home):
    user_config(isolated_home, server_table("slow", [str(SERVERS / "raw.py"), "slowstart"]))
    trace = tmp_path / "t.jsonl"
    started = time.monotonic()
    code, _ = one_shot(ws, trace, {"text": "answered without it"}, flags=["--timeout", "3"])
    took = time.monotonic() - started
    assert code == 0
    assert any("'slow' is still starting" in w for w in warnings(trace))
    assert took < 40, f"the run took {took:.1f} s with --timeout 3"  # the server takes 60 s to start
