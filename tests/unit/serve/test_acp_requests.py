"""What an ACP client sends, in cli-agent's terms: prompt content as the task's text, MCP servers as entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError, schema

from cli_agent.serve.acp.requests import client_servers, prompt_text


def text(value: str) -> schema.TextContentBlock:
    return schema.TextContentBlock(type="text", text=value)


def test_a_resource_link_in_the_workspace_is_a_mention_and_one_outside_stays_a_uri(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    inside = schema.ResourceContentBlock(type="resource_link", name="a", uri=(root / "src" / "a.py").as_uri())
    spaced = schema.ResourceContentBlock(type="resource_link", name="b", uri=(root / "b c.py").as_uri())
    outside = schema.ResourceContentBlock(type="resource_link", name="x", uri="https://example.com/x")
    assert prompt_text([text("look at"), inside, text(","), spaced, text("and"), outside], root) == \
        "look at @src/a.py , b c.py and https://example.com/x"


def test_an_embedded_text_resource_is_attached_whole_in_a_fence_longer_than_its_backticks(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    body = "print('```')\n"
    block = schema.EmbeddedResourceContentBlock(type="resource", resource=schema.TextResourceContents(
        uri=(root / "m.py").as_uri(), text=body))
    got = prompt_text([text("fix"), block], root)
    assert got == "fix\n\nAttached by the user:\n\nm.py:\n````\nprint('```')\n````"


@pytest.mark.parametrize("blocks", [
    [],
    [text("   ")],
    [schema.ImageContentBlock(type="image", data="AAAA", mime_type="image/png")],
])
def test_an_empty_prompt_or_an_image_is_invalid_params(tmp_path: Path, blocks: list[object]) -> None:
    with pytest.raises(RequestError) as caught:
        prompt_text(blocks, tmp_path)
    assert caught.value.code == -32602


def test_client_servers_become_config_entries_that_ask() -> None:
    stdio = schema.McpServerStdio(name="my tools!", command="/bin/srv", args=["-v"],
                                  env=[schema.EnvVariable(name="K", value="v")])
    http = schema.HttpMcpServer(type="http", name="docs", url="http://127.0.0.1:9/mcp",
                                headers=[schema.HttpHeader(name="Authorization", value="Bearer t")])
    got = client_servers([stdio, http])
    assert set(got) == {"my-tools", "docs"}
    mine = got["my-tools"]
    assert mine.command == "/bin/srv" and mine.args == ["-v"] and mine.env == {"K": "v"}
    assert got["docs"].url == "http://127.0.0.1:9/mcp" and got["docs"].headers == {"Authorization": "Bearer t"}
    assert all(server.approval == "ask" and server.origin == "the client (session/new)" for server in got.values())
    assert client_servers(None) == {}


def test_an_sse_server_or_a_bad_url_is_invalid_params() -> None:
    sse = schema.SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])
    bad = schema.HttpMcpServer(type="http", name="bad", url="ftp://x", headers=[])
    for server in (sse, bad):
        with pytest.raises(RequestError) as caught:
            client_servers([server])
        assert caught.value.code == -32602 and "MCP server" in str(caught.value)
