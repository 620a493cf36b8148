"""MCP servers as tool sources, with real servers the tests start: the SDK's MCPServer (tests/mcp_servers/demo.py)
over stdio and streamable HTTP, and a hand-written misbehaving one (raw.py) for the faults. Each fault ends in an
error naming the server while the session goes on."""

from __future__ import annotations

import json
import socket
import subprocess
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




def stdio_server(name: str, script: str, *args: str, extra: str = "") -> str:
    argv = json.dumps([str(SERVERS / script), *args])
    return f'[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {argv}\n{extra}\n'


def results(trace: Path) -> list[dict]:
    return [e.to_dict() for e in read_trace(trace).events if e.type == "tool_result"]


@pytest.mark.slow
def test_a_stdio_server_s_tools_are_offered_called_and_traced(ws, tmp_path, isolated_home, capsys):
    user_config(isolated_home, stdio_server("demo", "demo.py", extra='approval = { add = "never" }'))
    trace = tmp_path / "t.jsonl"
    code, provider = one_shot(ws, trace, call("demo__add", a=2, b=40), {"text": "42"})
    assert code == 0, capsys.readouterr().err
    schemas = {t["function"]["name"]: t["function"] for t in provider.requests[0].tools}
    assert schemas["demo__add"]["parameters"]["required"] == ["a", "b"]
    assert "read-only" in schemas["demo__add"]["description"]
    assert "## demo (MCP server) tools" in provider.requests[0].messages[0].content
    [result] = results(trace)
    assert result["tool"] == "demo__add" and result["envelope"]["ok"]
    assert result["envelope"]["data"] == {"server": "demo", "text": "42"}
    assert any("read_file" in w and "built-in" in w for w in warnings(trace))  # named like a built-in: said
    out = json.loads(capsys.readouterr().out)
    assert out["tool_calls"][0]["tool"] == "demo__add" and out["tool_calls"][0]["ok"]


@pytest.mark.slow
def test_an_mcp_tool_asks_by_default_so_a_headless_run_denies_it(ws, tmp_path, isolated_home, capsys):
    user_config(isolated_home, stdio_server("demo", "demo.py"))
    trace = tmp_path / "t.jsonl"
    code, _ = one_shot(ws, trace, call("demo__shout", text="hi"))
    assert code == 3
    assert "demo__shout needs approval" in capsys.readouterr().err
    trace = tmp_path / "t2.jsonl"
    code, _ = one_shot(ws, trace, call("demo__shout", text="hi"), {"text": "done"}, flags=["--yes"])
    assert code == 0
    assert results(trace)[0]["envelope"]["data"]["text"] == "HI"


def test_a_project_config_declares_servers_only_when_trusted_and_never_approves_them(ws, isolated_home):
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text(stdio_server("demo", "demo.py", extra='approval = "never"'))
    from cli_agent.config.loading import load_settings

    loaded = load_settings({}, workspace=ws)
    assert loaded.settings.mcp_servers == {}
    assert any("mcp_servers" in note and "untrusted" in note for note in loaded.notes)
    trusted = load_settings({}, workspace=ws, env={"CLI_AGENT_TRUST": "1", "CLI_AGENT_HOME": str(isolated_home)})
    server = trusted.settings.mcp_servers["demo"]
    assert server.origin.startswith("project config") and server.approval == "ask"
    assert any("approval from the project config" in note for note in trusted.notes)


@pytest.mark.slow
def test_a_tool_error_and_a_server_that_dies_mid_call_are_error_envelopes_and_the_run_goes_on(ws, tmp_path,
                                                                                              isolated_home):
    user_config(isolated_home, stdio_server("demo", "demo.py", extra='approval = "never"'))
    trace = tmp_path / "t.jsonl"
    code, _ = one_shot(ws, trace, call("demo__fail"), call("demo__die"), call("demo__add", a=1, b=2),
                       call("demo__die"), call("demo__add", a=1, b=2), {"text": "survived"})
    assert code == 0
    fail, died, after_restart, died_again, down = (r["envelope"] for r in results(trace))
    assert not fail["ok"] and "'demo'" in fail["errors"][0] and "it broke" in fail["errors"][0]
    assert not died["ok"] and "mcp server 'demo'" in died["errors"][0] and "restarted" in died["errors"][0]
    assert after_restart["ok"] and after_restart["data"]["text"] == "3"
    assert not died_again["ok"] and "stays down" in died_again["errors"][0]
    assert not down["ok"] and "not running" in down["errors"][0]


@pytest.mark.slow
def test_a_call_past_its_timeout_is_cancelled_on_the_server(ws, tmp_path, isolated_home, monkeypatch):
    monkeypatch.setenv("MARKER_DIR", str(tmp_path))
    user_config(isolated_home, stdio_server("demo", "demo.py", extra='approval = "never"\ntimeout_s = 2\n'
                                            'env = { MARKER_DIR = "' + str(tmp_path) + '" }'))
    trace = tmp_path / "t.jsonl"
    code, _ = one_shot(ws, trace, call("demo__sleep", seconds=60), call("demo__add", a=1, b=1), {"text": "ok"})
    assert code == 0
    slow, quick = (r["envelope"] for r in results(trace))
    assert not slow["ok"] and "'demo'" in slow["errors"][0] and "cancelled" in slow["errors"][0]
    assert quick["ok"]
    deadline = time.monotonic() + 10
    while not (tmp_path / "cancelled").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (tmp_path / "cancelled").exists()  # the server got notifications/cancelled


@pytest.mark.slow
def test_a_10_mb_result_is_cut_for_the_trace_and_for_the_model(ws, tmp_path, isolated_home):
    user_config(isolated_home, stdio_server("demo", "demo.py", extra='approval = "never"'))
    trace = tmp_path / "t.jsonl"
    provider = ScriptedProvider([call("demo__big", size=10_000_000), {"text": "ok"}], native_tools=True)
    code = run(["-C", str(ws), "-p", "go", "--model", "x", "--trace", str(trace)],
               provider_factory=lambda settings: provider)
    assert code == 0
    [result] = results(trace)
    assert result["envelope"]["ok"] and "too long" in " ".join(result["envelope"]["warnings"])
    assert len(result["envelope"]["data"]["text"]) < 1_100_000
    assert trace.stat().st_size < 3_000_000
    assert len(provider.requests[1].messages[-1].content) < 25_000  # what the model got: capped like any result


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "expected"), [
    ("garbage", "wrote to stdout what is not MCP"),
    ("missing", "could not start"),
])
def test_a_server_that_does_not_start_is_named_and_the_run_goes_on(mode, expected, ws, tmp_path, isolated_home):
    if mode == "missing":
        user_config(isolated_home, '[mcp_servers.bad]\ncommand = "/nonexistent/mcp-server"\n')
    else:
        user_config(isolated_home, stdio_server("bad", "raw.py", mode, extra="timeout_s = 2"))
    trace = tmp_path / "t.jsonl"
    code, provider = one_shot(ws, trace, call("read_file", path="x"), {"text": "fine without it"})
    assert code == 0
    assert any(w.startswith("mcp server 'bad' is not available") and expected in w for w in warnings(trace))
    assert not any(t["function"]["name"].startswith("bad__") for t in provider.requests[0].tools)


@pytest.mark.slow
def test_protocol_faults_after_start_are_error_envelopes_naming_the_server(ws, tmp_path, isolated_home):
    config = "".join([
        stdio_server("noisy", "raw.py", "noisy", extra='approval = "never"'),
        stdio_server("badresult", "raw.py", "badresult", extra='approval = "never"'),
        stdio_server("hang", "raw.py", "hang", extra='approval = "never"\ntimeout_s = 2'),
        stdio_server("badschema", "raw.py", "badschema", extra='approval = "never"'),
    ])
    user_config(isolated_home, config)
    trace = tmp_path / "t.jsonl"
    code, provider = one_shot(ws, trace, call("noisy__echo", text="through the noise"),
                              call("badresult__echo", text="x"), call("hang__echo", text="x"),
                              call("badschema__echo", text="still works"), {"text": "done"})
    assert code == 0
    noisy, badresult, hang, badschema = (r["envelope"] for r in results(trace))
    assert noisy["ok"] and noisy["data"]["text"] == "through the noise"
    assert not badresult["ok"] and "mcp server 'badresult' sent an unusable result" in badresult["errors"][0]
    assert not hang["ok"] and "mcp server 'hang' stopped answering" in hang["errors"][0]
    assert badschema["ok"]
    names = {t["function"]["name"] for t in provider.requests[0].tools}
    assert "badschema__echo" in names and "badschema__broken" not in names
    assert any("'badschema': tool 'broken' skipped" in w for w in warnings(trace))


@pytest.mark.slow
def test_two_servers_with_the_same_tool_name_are_told_apart(ws, tmp_path, isolated_home):
    user_config(isolated_home, stdio_server("one", "raw.py", "noisy", extra='approval = "never"')
                + stdio_server("two", "raw.py", "noisy", extra='approval = "never"'))
    trace = tmp_path / "t.jsonl"
    code, provider = one_shot(ws, trace, call("two__echo", text="from two"), {"text": "ok"})
    assert code == 0
    names = {t["function"]["name"] for t in provider.requests[0].tools}
    assert {"one__echo", "two__echo"} <= names
    assert any("'one', 'two' each have a tool 'echo'" in w for w in warnings(trace))
    assert results(trace)[0]["envelope"]["data"]["text"] == "from two"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(tmp_path):
    port = free_port()
    log = (tmp_path / "http-server.log").open("w")
    process = subprocess.Popen([sys.executable, str(SERVERS / "demo.py"), "http", str(port)], stdout=log,
                               stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)
        log.close()


@pytest.mark.slow
def test_a_streamable_http_server_on_loopback(ws, tmp_path, isolated_home, http_server):
    user_config(isolated_home, f'[mcp_servers.web]\nurl = "{http_server}"\nheaders = {{ X-Test = "1" }}\n'
                               'approval = "never"\n')
    trace = tmp_path / "t.jsonl"
    code, _ = one_shot(ws, trace, call("web__shout", text="over http"), {"text": "ok"})
    assert code == 0
    assert results(trace)[0]["envelope"]["data"]["text"] == "OVER HTTP"


@pytest.mark.slow
def test_replay_plays_mcp_results_back_from_the_trace_without_the_server(ws, tmp_path, isolated_home, capsys):
    user_config(isolated_home, stdio_server("demo", "demo.py", extra='approval = { add = "never" }'))
    trace = tmp_path / "t.jsonl"
    code, _ = one_shot(ws, trace, call("demo__add", a=2, b=3), call("demo__shout", text="hey"), {"text": "done"},
                       flags=["--yes"])
    assert code == 0
    user_config(isolated_home, '[mcp_servers.demo]\ncommand = "/nonexistent/no-live-server"\n')
    capsys.readouterr()
    assert run(["replay", str(trace), "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "identical" and report["tool_calls"] == 2, report


@pytest.mark.slow
def test_the_approval_question_shows_the_server_and_its_hints_as_claims(ws, tmp_path, isolated_home):
    from rich.console import Console

    from cli_agent.config.loading import load_settings
    from cli_agent.contracts.events import Decision
    from cli_agent.session.session import drive, open_session
    from cli_agent.ui.view.approve import render_call

    user_config(isolated_home, stdio_server("demo", "demo.py"))
    provider = ScriptedProvider([call("demo__add", a=1, b=1), {"text": "ok"}], native_tools=True)
    settings = load_settings({"model": "x", "trace": str(tmp_path / "t.jsonl")}, workspace=ws).settings
    session = open_session(settings, interactive=True, provider_factory=lambda s: provider, record=False)
    asked = []
    try:
        finished = drive(session.run("go", lambda question: asked.append(question) or Decision.YES))
    finally:
        session.close()
    assert finished.stop_reason.value == "done"
    [question] = asked
    assert "MCP server 'demo'" in question.about and "read-only (its own claim, not checked)" in question.about
    console = Console(record=True, width=200)
    console.print(render_call(question))
    assert "the server says: read-only" in console.export_text()


@pytest.mark.slow
def test_the_json_protocol_calls_mcp_tools_too(ws, tmp_path, isolated_home):
    user_config(isolated_home, stdio_server("demo", "demo.py", extra='approval = "never"'))
    trace = tmp_path / "t.jsonl"
    code, provider = one_shot(ws, trace, {"raw": '{"tool": "demo__add", "parameters": {"a": 5, "b": 6}, '
                                                 '"terminate": false}'}, {"raw": "eleven"},
                              flags=["--protocol", "json"])
    assert code == 0
    system = provider.requests[0].messages[0].content
    assert "### demo__add (required)" in system and '"tool": "<tool name>"' in system
    assert provider.requests[0].tools is None
    assert results(trace)[0]["envelope"]["data"]["text"] == "11"


def test_many_mcp_tools_are_optional_and_offered_by_the_task_under_a_budget():
    from types import SimpleNamespace

    from cli_agent.config.mcp_settings import McpServer
    from cli_agent.mcp.tools import MANY_TOOLS_CHARS, specs_for_servers
    from cli_agent.tools.registry import Registry

    def tool(name):
        return SimpleNamespace(name=name, title=None, description=f"Does {name}. " + "Words. " * 80,
                               input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
                               annotations=None)

    names = [f"{verb}_{thing}" for verb in ("fetch", "update", "remove", "create") for thing in
             ("issue", "label", "milestone", "comment", "review", "branch", "release", "webhook", "secret", "runner")]
    specs, notes = specs_for_servers([("hub", McpServer(command="x"), [tool(n) for n in names])], [])
    assert all(s.optional for s in specs) and "each is offered when the task mentions it" in notes[-1]
    builtin = Registry.builtin()
    handlers = {n: builtin.handler(n) for n in builtin.names()} | {s.name: (lambda ctx, **kw: None) for s in specs}
    registry = Registry([*builtin.specs(), *specs], handlers, optional_budget=MANY_TOOLS_CHARS)
    offered = {s.name for s in registry.model_tools("please fetch_issue 12")}
    assert "hub__fetch_issue" in offered and "hub__remove_secret" not in offered and "read_file" in offered
    everything = [s for s in registry.model_tools("ask hub about everything") if s.name.startswith("hub__")]
    assert 0 < len(everything) < len(names)  # the server named: its tools, as many as the budget holds
    assert sum(len(s.description) + len(json.dumps(s.parameters)) for s in everything) <= MANY_TOOLS_CHARS


@pytest.mark.slow
def test_slash_mcp_in_the_repl_shows_the_servers_state_and_tools(ws, tmp_path, isolated_home):
    from rich.console import Console

    from cli_agent.config.loading import load_settings
    from cli_agent.session.session import open_session
    from cli_agent.ui.repl.repl import Repl

    user_config(isolated_home, stdio_server("demo", "demo.py") + '[mcp_servers.gone]\ncommand = "/nonexistent/x"\n')
    provider = ScriptedProvider([], native_tools=True)
    settings = load_settings({"model": "x", "trace": str(tmp_path / "t.jsonl")}, workspace=ws).settings
    session = open_session(settings, interactive=True, provider_factory=lambda s: provider, record=False)
    repl = Repl(session, Console(record=True, width=200, color_system=None), lambda s: provider)
    try:
        assert session.mcp is not None
        session.mcp.hub.wait(session.mcp.hub.start_limit())
        repl.commands.dispatch(repl, "/mcp")
    finally:
        session.close()
    shown = repl.console.export_text()
    assert "demo  [ready]" in shown and "demo__add: Add two integers.  [read-only (server's hint), asks]" in shown
    assert "gone  [failed]" in shown and "could not start '/nonexistent/x'" in shown


@pytest.mark.slow
def test_a_server_whose_tools_change_is_listed_again_for_the_next_run(ws, tmp_path, isolated_home):
    from cli_agent.config.loading import load_settings
    from cli_agent.contracts.events import Decision
    from cli_agent.session.session import drive, open_session

    user_config(isolated_home, stdio_server("demo", "demo.py", extra='approval = "never"'))
    provider = ScriptedProvider([call("demo__grow"), {"text": "grew"}, call("demo__grown"), {"text": "done"}],
                                native_tools=True)
    settings = load_settings({"model": "x", "trace": str(tmp_path / "t.jsonl")}, workspace=ws).settings
    session = open_session(settings, interactive=False, provider_factory=lambda s: provider, record=False)
    try:
        assert drive(session.run("grow", lambda asked: Decision.NO), session.trace).stop_reason.value == "done"
        deadline = time.monotonic() + 20
        while not any(t.name == "grown" for t in session.mcp.hub.status("demo").tools):
            assert time.monotonic() < deadline, "the new tool was never listed"
            time.sleep(0.1)
        assert drive(session.run("use it", lambda asked: Decision.NO), session.trace).stop_reason.value == "done"
    finally:
        session.close()
    first, second = ({t["function"]["name"] for t in r.tools} for r in (provider.requests[0], provider.requests[2]))
    assert "demo__grown" not in first and "demo__grown" in second
    assert results(tmp_path / "t.jsonl")[-1]["envelope"]["data"]["text"] == "grown!"


@pytest.mark.slow
def test_tools_run_calls_an_mcp_tool_through_the_same_approval(ws, isolated_home, capsys):
    user_config(isolated_home, stdio_server("demo", "demo.py"))
    assert run(["tools", "run", "demo__add", '{"a": 20, "b": 22}', "-C", str(ws)]) == 3  # asks; no one to ask
    capsys.readouterr()
    assert run(["tools", "run", "demo__add", '{"a": 20, "b": 22}', "-C", str(ws), "--yes"]) == 0
    assert json.loads(capsys.readouterr().out)["data"] == {"server": "demo", "text": "42"}
