"""`cli-agent acp` end to end: a child process driven by the ACP SDK's own client side over real stdio, with the
scripted model. Sessions, streaming, tool calls with kinds, locations and diffs, permission requests and their
answers, modes, cancel, session/load, a client that dies mid-turn, and bad JSON-RPC."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from acpkit import Recorder, agent_command, call, drive, write_script

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    return root


def test_a_turn_reads_streams_and_asks_before_each_edit(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("read_file", "r1", path="a.txt")]},
        {"tool_calls": [call("edit_file", "e1", path="a.txt", old="hello", new="hi")]},
        {"text": "Done: hi.", "chunks": ["Done", ": hi."]},
        {"tool_calls": [call("edit_file", "e2", path="a.txt", old="hi", new="bye")]},
        {"text": "never said"},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        assert session.modes.current_mode_id == "ask"
        assert [m.id for m in session.modes.available_modes] == ["ask", "plan", "edits", "all"]
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("change a.txt")])
        assert first.stop_reason == "end_turn"
        assert (ws / "a.txt").read_text() == "hi\n"
        second = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
        assert second.stop_reason == "end_turn"  # denied: the turn ends, nothing written
        assert (ws / "a.txt").read_text() == "hi\n"

    client = Recorder(["allow_once", "reject_once"])
    drive(ws, model, body, client)
    starts = {u.tool_call_id: u for _, u in client.updates if u.session_update == "tool_call"}
    assert starts["r1"].kind == "read" and starts["r1"].locations[0].path == str(ws / "a.txt")
    assert starts["e1"].kind == "edit"
    assert [u.status for u in client.tool_updates("r1")][-1] == "completed"
    done = client.tool_updates("e1")[-1]
    assert done.status == "completed"
    assert done.content[0].type == "diff" and done.content[0].old_text == "hello\n" and \
        done.content[0].new_text == "hi\n"
    assert [a.tool_call_id for a in client.asked] == ["e1", "e2"]
    assert client.asked[0].content[0].new_text == "hi\n"
    assert client.tool_updates("e2")[-1].status == "failed"
    assert "Done: hi." in client.text()
    assert "available_commands_update" in client.kinds()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")
def test_a_command_change_set_is_one_request_with_its_diff_and_its_output_streams(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("run_command", "c1", command="echo made > new.txt && echo hi >> a.txt && echo ran")]},
        {"text": "ran it"},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])
        assert done.stop_reason == "end_turn"

    client = Recorder(["allow_once"])
    drive(ws, model, body, client)
    assert len(client.asked) == 1  # the whole change set, once
    diffs = {Path(c.path).name: c for c in client.asked[0].content if c.type == "diff"}
    assert diffs["new.txt"].old_text is None and diffs["new.txt"].new_text == "made\n"
    assert diffs["a.txt"].old_text == "hello\n" and diffs["a.txt"].new_text == "hello\nhi\n"
    assert (ws / "new.txt").read_text() == "made\n" and (ws / "a.txt").read_text() == "hello\nhi\n"
    start = next(u for _, u in client.updates if u.session_update == "tool_call" and u.tool_call_id == "c1")
    assert start.kind == "execute"
    result = client.tool_updates("c1")[-1]
    assert result.status == "completed"
    assert any(c.type == "content" and "ran" in c.content.text for c in result.content)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")
def test_a_rejected_change_set_writes_nothing_and_reject_always_stops_asking(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("run_command", "c1", command="echo x > new.txt")]},
        {"tool_calls": [call("run_command", "c2", command="echo y > new.txt")]},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        for text in ("one", "two"):
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
            assert done.stop_reason == "end_turn"

    client = Recorder(["reject_always"])
    drive(ws, model, body, client)
    assert [a.tool_call_id for a in client.asked] == ["c1"]  # c2 was refused without asking
    assert not (ws / "new.txt").exists()
    assert client.tool_updates("c2")[-1].status == "failed"


def test_set_mode_edits_approves_edits_and_locked_paths_stay_refused_in_mode_all(ws: Path, tmp_path: Path) -> None:
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text('locks = ["locked.txt"]\n')
    (ws / "locked.txt").write_text("keep\n")
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("read_file", "r1", path="a.txt"),
                        call("edit_file", "e1", path="a.txt", old="hello", new="hi")]},
        {"text": "edited"},
        {"tool_calls": [call("write_file", "w1", path="locked.txt", content="gone\n")]},
        {"tool_calls": [call("write_file", "w2", path=".cli-agent/config.toml", content="yes = true\n")]},
        {"text": "could not"},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import RequestError, text_block

        session = await conn.new_session(cwd=str(ws))
        sid = session.session_id
        await conn.set_session_mode(session_id=sid, mode_id="edits")
        assert (await conn.prompt(session_id=sid, prompt=[text_block("edit")])).stop_reason == "end_turn"
        await conn.set_session_mode(session_id=sid, mode_id="all")
        assert (await conn.prompt(session_id=sid, prompt=[text_block("lock")])).stop_reason == "end_turn"
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=sid, mode_id="yolo")

    client = Recorder([])
    drive(ws, model, body, client)
    assert client.asked == []
    assert (ws / "a.txt").read_text() == "hi\n"
    assert (ws / "locked.txt").read_text() == "keep\n"
    assert (ws / ".cli-agent" / "config.toml").read_text() == 'locks = ["locked.txt"]\n'
    assert client.tool_updates("w1")[-1].status == "failed" and client.tool_updates("w2")[-1].status == "failed"
    modes = [u.current_mode_id for _, u in client.updates if u.session_update == "current_mode_update"]
    assert modes == ["edits", "all"]


def test_cancel_in_the_middle_of_a_streaming_answer_ends_the_turn_cancelled(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [
        {"text": "".join(f"word{i} " for i in range(200)), "chunks": [f"word{i} " for i in range(200)],
         "chunk_delay": 0.05},
        {"text": "next turn fine"},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("talk")]))
        while "word3" not in client.text(sid):
            await asyncio.sleep(0.02)
        await conn.cancel(session_id=sid)
        done = await asyncio.wait_for(turn, 5)
        assert done.stop_reason == "cancelled"
        assert "word199" not in client.text(sid)
        again = await conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert again.stop_reason == "end_turn"
        assert "next turn fine" in client.text(sid)

    drive(ws, model, body)


def test_cancel_while_a_permission_is_pending_writes_nothing(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("create_file", "c1", path="b.txt", content="b\n")]},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("edit")]))
        await client.asking.wait()
        await conn.cancel(session_id=session.session_id)
        assert (await asyncio.wait_for(turn, 5)).stop_reason == "cancelled"
        client.release.set()

    drive(ws, model, body, Recorder(["wait"]))
    assert not (ws / "b.txt").exists()


def test_session_load_replays_an_earlier_session_and_continues_it(ws: Path, tmp_path: Path) -> None:
    first = write_script(tmp_path / "one.json", [
        {"tool_calls": [call("read_file", "r1", path="a.txt")]},
        {"text": "it says hello"},
    ])

    async def one(conn: Any, client: Recorder, process: Any) -> str:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("what does a.txt say?")])
        return str(session.session_id)

    full_id = drive(ws, first, one)
    second = write_script(tmp_path / "two.json", [{"text": "still hello"}])

    async def two(conn: Any, client: Recorder, process: Any) -> None:
        from acp import RequestError, text_block

        listed = await conn.list_sessions(cwd=str(ws))
        assert [(i.session_id, i.title) for i in listed.sessions] == [(full_id, "what does a.txt say?")]
        session_id = full_id[:6]  # a unique prefix, as --resume takes
        await conn.load_session(cwd=str(ws), session_id=session_id)
        assert client.kinds(full_id) == []  # the updates use the client's id
        replayed = client.kinds(session_id)
        assert replayed[:4] == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
        assert "what does a.txt say?" in client.text(session_id, "user_message_chunk")
        assert "it says hello" in client.text(session_id)
        done = await conn.prompt(session_id=session_id, prompt=[text_block("and now?")])
        assert done.stop_reason == "end_turn"
        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(ws), session_id="nosuchid")
        other = await conn.new_session(cwd=str(ws))  # several sessions in one process
        assert other.session_id != session_id

    drive(ws, second, two)


def test_a_client_that_dies_mid_turn_leaves_nothing_half_applied(ws: Path, tmp_path: Path) -> None:
    from acp import PROTOCOL_VERSION

    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("read_file", "r1", path="a.txt"),
                        call("edit_file", "e1", path="a.txt", old="hello", new="hi"),
                        call("create_file", "c1", path="b.txt", content="b\n")]},
    ])
    env = {**os.environ}
    with (tmp_path / "err.log").open("w") as err:
        import subprocess

        process = subprocess.Popen(agent_command(model, ws), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=err, env=env)
        assert process.stdin is not None and process.stdout is not None

        def send(message: dict[str, Any]) -> None:
            assert process.stdin is not None
            process.stdin.write((json.dumps(message) + "\n").encode())
            process.stdin.flush()

        def until(predicate: Any) -> dict[str, Any]:
            assert process.stdout is not None
            while True:
                message = json.loads(process.stdout.readline())
                if predicate(message):
                    return message  # type: ignore[no-any-return]

        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}})
        until(lambda m: m.get("id") == 0)
        send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}})
        sid = until(lambda m: m.get("id") == 1)["result"]["sessionId"]
        send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
              "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "edit"}]}})
        until(lambda m: m.get("method") == "session/request_permission")
        process.stdin.close()  # the client dies with the question unanswered
        assert process.wait(timeout=30) == 0
        process.stdout.close()
    assert (ws / "a.txt").read_text() == "hello\n" and not (ws / "b.txt").exists()
    assert "Traceback" not in (tmp_path / "err.log").read_text()


def test_bad_json_rpc_gets_errors_and_the_process_stays_up(ws: Path, tmp_path: Path) -> None:
    import subprocess

    model = write_script(tmp_path / "s.json", [{"text": "hi"}])
    lines = [
        "this is not json",
        "[1, 2]",
        '{"jsonrpc": "2.0", "id": 1}',
        '{"jsonrpc": "1.0", "id": 2, "method": "initialize"}',
        # before initialize:
        '{"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}',
        '{"jsonrpc": "2.0", "id": 4, "method": "no/such/method", "params": {}}',
        '{"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"sessionId": 3}}',
        '{"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {"protocolVersion": 1}}',
        '{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": []}}',
        '{"jsonrpc": "2.0", "id": 8, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}}',
        '{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}}',
        '{"jsonrpc": "2.0", "method": "no/such/notification"}',
        '{"jsonrpc": "2.0", "id": 9, "method": "session/set_mode", "params": {"sessionId": "nope", "modeId": "all"}}',
        '{"jsonrpc": "2.0", "id": 11, "method": "session/new", "params": {"cwd": "/no/such/dir", "mcpServers": []}}',
        '{"jsonrpc": "2.0", "id": 12, "method": "session/prompt", "params": {"sessionId": "x", "prompt": "text"}}',
        '{"jsonrpc": "2.0", "id": 10, "method": "session/new", "params": {"cwd": "' + str(ws)
        + '", "mcpServers": []}}',
    ]
    done = subprocess.run(agent_command(model, ws), input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {r.get("id"): r for r in replies if "method" not in r}
    codes = [r["error"]["code"] for r in replies if r.get("id") is None and "error" in r]
    assert codes == [-32700, -32600]
    assert by_id[1]["error"]["code"] == -32600 and by_id[2]["error"]["code"] == -32600
    assert by_id[3]["error"] == {"code": -32600, "message": "call initialize first", "data": None}  # out of order
    assert by_id[4]["error"]["code"] == -32601
    assert by_id[5]["error"]["code"] == -32602
    assert by_id[6]["result"]["agentCapabilities"]["loadSession"] is True
    assert by_id[7]["error"]["code"] == -32602 and by_id[8]["error"]["code"] == -32602
    assert by_id[9]["error"]["code"] == -32602
    assert by_id[10]["result"]["sessionId"]
    assert by_id[11]["error"]["code"] == -32602 and "not a folder" in by_id[11]["error"]["message"]
    assert by_id[12]["error"]["code"] == -32602


def test_an_untrusted_project_config_is_ignored_and_named(ws: Path, tmp_path: Path) -> None:
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text('approval = "all"\napi_base = "http://127.0.0.1:9/v1"\n')
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("create_file", "c1", path="b.txt", content="b\n")]},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        assert session.modes.current_mode_id == "ask"  # approval = "all" was not taken
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit")])

    client = Recorder(["reject_once"])
    drive(ws, model, body, client)
    notes = client.text()
    assert "untrusted project config" in notes and "approval" in notes and "api_base" in notes
    assert len(client.asked) == 1


def test_a_resource_link_is_a_mention_and_workflows_are_slash_commands(ws: Path, tmp_path: Path) -> None:
    (ws / ".cli-agent" / "workflows").mkdir(parents=True)
    (ws / ".cli-agent" / "workflows" / "stamp.toml").write_text(
        'name = "stamp"\ntitle = "Stamp"\ndescription = "Write a stamp file"\ncategory = "Edit"\n'
        '[[params]]\nname = "word"\ntype = "string"\nrequired = true\n'
        '[[steps]]\ntool = "create_file"\n[steps.arguments]\npath = "stamp.txt"\ncontent = "{{word}}"\n')
    (ws / ".cli-agent" / "workflows" / "twice.toml").write_text(
        'name = "twice"\ndescription = "Two steps"\ncategory = "Edit"\n'
        '[[params]]\nname = "word"\ntype = "string"\nrequired = true\n'
        '[[steps]]\nprompt = "say {{word}}"\n'
        '[[steps]]\ntool = "create_file"\n[steps.arguments]\npath = "twice.txt"\ncontent = "{{word}}"\n')
    model = write_script(tmp_path / "s.json", [{"text": "seen"}, {"text": "said"}])

    async def body(conn: Any, client: Recorder, process: Any) -> Any:
        from acp import resource_link_block, text_block

        session = await conn.new_session(cwd=str(ws))
        sid = session.session_id
        link = resource_link_block("a.txt", (ws / "a.txt").as_uri())
        assert (await conn.prompt(session_id=sid, prompt=[text_block("look at"), link])).stop_reason == "end_turn"
        missing = await conn.prompt(session_id=sid, prompt=[text_block("/stamp")])
        assert missing.stop_reason == "end_turn"
        assert "word" in client.text(sid)
        done = await conn.prompt(session_id=sid, prompt=[text_block("/stamp ok")])
        assert done.stop_reason == "end_turn"
        both = await conn.prompt(session_id=sid, prompt=[text_block("/twice yes")])
        assert both.stop_reason == "end_turn"
        assert (ws / "twice.txt").read_text() == "yes"  # answered once every step has run

    client = Recorder(["allow_once", "allow_once"])
    drive(ws, model, body, client)
    commands = next(u.available_commands for _, u in client.updates
                    if u.session_update == "available_commands_update")
    stamp = next(c for c in commands if c.name == "stamp")
    assert stamp.description == "Write a stamp file" and stamp.input.root.hint == "WORD"
    assert (ws / "stamp.txt").read_text() == "ok"
    log = (ws.parent / "acp.log").read_text()
    assert "Traceback" not in log


TIME_SERVER = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent)) or shutil.which("mcp-server-time")


@pytest.mark.skipif(TIME_SERVER is None, reason="mcp-server-time (the dev extra) is not installed")
def test_an_mcp_server_from_session_new_is_used_and_asks_like_the_config_s(ws: Path, tmp_path: Path) -> None:
    arguments = {"source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("time__convert_time", "t1", **arguments)]},
        {"text": "20:00 in Tokyo"},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block
        from acp.schema import McpServerStdio

        server = McpServerStdio(name="time", command=str(TIME_SERVER), args=["--local-timezone", "Europe/Paris"],
                                env=[])
        session = await conn.new_session(cwd=str(ws), mcp_servers=[server])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("noon in Paris, in Tokyo?")])
        assert done.stop_reason == "end_turn"

    client = Recorder(["allow_once"])
    drive(ws, model, body, client)
    assert [a.tool_call_id for a in client.asked] == ["t1"]
    result = client.tool_updates("t1")[-1]
    assert result.status == "completed" and "Asia/Tokyo" in json.dumps(result.raw_output)


def test_sigterm_mid_turn_ends_the_turn_and_the_process_cleanly(ws: Path, tmp_path: Path) -> None:
    import signal

    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("create_file", "c1", path="b.txt", content="b\n")]},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("edit")]))
        await client.asking.wait()
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 30) == 0
        turn.cancel()  # the question stays unanswered: the agent is gone

    drive(ws, model, body, Recorder(["wait"]))
    assert not (ws / "b.txt").exists()
    assert "Traceback" not in (ws.parent / "acp.log").read_text()


def test_a_broken_config_exits_2_before_serving_and_other_commands_never_import_the_sdk(ws: Path,
                                                                                          tmp_path: Path) -> None:
    import subprocess

    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text("max_steps = [\n")
    broken = subprocess.run([sys.executable, "-m", "cli_agent", "acp", "-C", str(ws)], capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert broken.returncode == 2 and broken.stdout == ""
    assert broken.stderr.count("\n") == 1 and "config.toml" in broken.stderr
    (ws / ".cli-agent" / "config.toml").unlink()
    model = write_script(tmp_path / "s.json", [{"text": "hi"}])
    code = ("import sys\nfrom cli_agent.cli.main import run\ncode = run(sys.argv[1:])\n"
            "print(code, 'acp' in sys.modules, 'cli_agent.serve.acp' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, "--model", model, "-C", str(ws), "-p", "hi"],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "0 False False"


def test_two_sessions_run_their_turns_at_the_same_time(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    model = write_script(tmp_path / "s.json", [
        {"text": "one two three four", "chunks": ["one ", "two ", "three ", "four"], "chunk_delay": 0.2},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        first, second = await conn.new_session(cwd=str(ws)), await conn.new_session(cwd=str(other))
        done = await asyncio.gather(*(conn.prompt(session_id=s.session_id, prompt=[text_block("count")])
                                      for s in (first, second)))
        assert [d.stop_reason for d in done] == ["end_turn", "end_turn"]
        for s in (first, second):
            assert client.text(s.session_id).endswith("one two three four")
        chunks = [sid for sid, u in client.updates if u.session_update == "agent_message_chunk"
                  and u.content.text in ("one ", "two ", "three ", "four")]
        a, b = first.session_id, second.session_id
        assert chunks.index(a) < len(chunks) - 1 - chunks[::-1].index(b)  # the two answers streamed side by side
        assert chunks.index(b) < len(chunks) - 1 - chunks[::-1].index(a)

    drive(ws, model, body)
