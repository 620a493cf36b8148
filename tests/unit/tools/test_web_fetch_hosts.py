"""A grant is for one host, redirects included: web_fetch never follows a redirect to another host (the model
fetches that URL in a call of its own, which is asked for, or allowed by a grant for that host, on its own), and
over ACP "allow always" for a page grants its host, not every host. Two names of one loopback server stand for two
hosts (private addresses allowed, as a user's config can)."""

from __future__ import annotations

import pytest
from acpkit import Recorder, call, drive, write_script
from webkit import web_server

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools.context import ToolContext
from cli_agent.tools.web.address import WebSetup
from cli_agent.tools.web.page import web_fetch


def test_a_redirect_to_another_host_is_not_followed(tmp_path):
    ctx = ToolContext(Workspace(tmp_path), web=WebSetup(allow_private=True))
    with web_server() as (base, hits):
        other = base.replace("127.0.0.1", "localhost") + "/page"
        with pytest.raises(ToolError, match=r"redirects to .*localhost.* another host") as stopped:
            web_fetch(ctx, f"{base}/to?u={other}")
        assert web_fetch(ctx, f"{base}/to?u=/page")["title"] == "Release notes & more"  # the same host: followed
    assert hits == [f"/to?u={other}", "/to?u=/page", "/page"]  # nothing was asked of the other host
    assert stopped.value.hints["moved_to"] == other


@pytest.mark.slow
def test_allow_always_over_acp_grants_the_pages_host_only(tmp_path, isolated_home):
    ws = tmp_path / "ws"
    ws.mkdir()
    (isolated_home / "config").mkdir(parents=True, exist_ok=True)
    (isolated_home / "config" / "config.toml").write_text("[web]\nallow_private = true\n")
    with web_server() as (base, hits):
        other = base.replace("127.0.0.1", "localhost")
        model = write_script(tmp_path / "s.json", [
            {"tool_calls": [call("web_fetch", "f1", url=f"{base}/page")]},
            {"tool_calls": [call("web_fetch", "f2", url=f"{base}/json")]},
            {"tool_calls": [call("web_fetch", "f3", url=f"{other}/text")]},
            {"text": "read them"}])

        async def body(conn, client, process):
            from acp import text_block

            session = await conn.new_session(cwd=str(ws))
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("read the pages")])
            assert done.stop_reason == "end_turn"

        client = Recorder(["allow_always", "reject_once"])
        drive(ws, model, body, client)
    assert [a.tool_call_id for a in client.asked] == ["f1", "f3"]  # the other host is asked about again
    assert hits == ["/page", "/json"]


def test_the_repl_offers_no_grant_of_web_fetch_on_every_host():
    from cli_agent.contracts.events import ApprovalAsked
    from cli_agent.contracts.messages import ToolCall
    from cli_agent.ui.view.approve import choices

    asked = ApprovalAsked(call=ToolCall("f1", "web_fetch", {"url": "https://docs.example.com/a"}, ""), change=None,
                          index=1, total=1, scope="docs.example.com")
    offered = choices(asked).plain
    assert "yes to every web_fetch of docs.example.com this session" in offered
    assert "every web_fetch call" not in offered  # "t" would have granted every host
