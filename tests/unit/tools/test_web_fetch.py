"""web_fetch against a real HTTP server on 127.0.0.1 (private addresses allowed, as a user's config can), and the
addresses it must refuse by default."""

from __future__ import annotations

import pytest
from webkit import web_server

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.sandbox import refusal
from cli_agent.tools.context import ToolContext
from cli_agent.tools.web.address import WebSetup
from cli_agent.tools.web.page import web_fetch


def ctx(tmp_path, **web):
    return ToolContext(Workspace(tmp_path), web=WebSetup(**({"allow_private": True} | web)))


def test_an_html_page_comes_back_as_markdown_with_its_title(tmp_path):
    with web_server() as (base, hits):
        data = web_fetch(ctx(tmp_path), f"{base}/page")
    assert data["status"] == 200 and data["title"] == "Release notes & more"
    text = data["content"]
    assert "# Version 2.0" in text and "`parse()`" in text and "- faster" in text
    assert f"[a strict flag]({base}/api)" in text  # links made absolute
    assert "steal()" not in text and "color:red" not in text and "x.png" not in text and "Home | Docs" not in text
    assert hits == ["/page"]


def test_text_and_json_come_back_as_they_are_in_their_charset(tmp_path):
    with web_server() as (base, _):
        assert web_fetch(ctx(tmp_path), f"{base}/text")["content"] == "plain words, é\n"
        assert web_fetch(ctx(tmp_path), f"{base}/json")["content"] == '{"version": "2.0"}'


def test_redirects_are_followed_and_named(tmp_path):
    with web_server() as (base, _):
        data = web_fetch(ctx(tmp_path), f"{base}/to?u=/to%3Fu%3D/page%26code%3D301")
    assert data["url"] == f"{base}/page" and data["redirected"] == [f"{base}/to?u=/page&code=301", f"{base}/page"]


def test_a_redirect_loop_stops_at_the_limit(tmp_path):
    with web_server() as (base, hits), pytest.raises(ToolError, match="more than 3 redirects"):
        web_fetch(ctx(tmp_path, max_redirects=3), f"{base}/loop")
    assert len(hits) == 4


def test_a_redirect_to_another_scheme_is_refused(tmp_path):
    with web_server() as (base, _), pytest.raises(ToolError, match="only http and https"):
        web_fetch(ctx(tmp_path), f"{base}/to?u=file:///etc/passwd")


def test_a_big_page_is_cut_at_the_size_cap(tmp_path):
    with web_server() as (base, _):
        data = web_fetch(ctx(tmp_path, max_bytes=1000), f"{base}/big?n=50000")
    assert len(data["content"]) == 1000 and "only its start was read" in data["note"]


def test_a_long_page_is_read_in_parts(tmp_path):
    with web_server() as (base, _):
        first = web_fetch(ctx(tmp_path), f"{base}/big?n=40000")
        second = web_fetch(ctx(tmp_path), f"{base}/big?n=40000", offset=first["part"]["next_offset"])
        last = web_fetch(ctx(tmp_path), f"{base}/big?n=40000", offset=second["part"]["next_offset"])
        with pytest.raises(ToolError, match="past the end"):
            web_fetch(ctx(tmp_path), f"{base}/big?n=40000", offset=50_000)
    assert len(first["content"]) == len(second["content"]) == 16_000 and len(last["content"]) == 8_000
    assert first["part"] == {"offset": 0, "total_chars": 40_000, "next_offset": 16_000,
                             "note": "more follows: call web_fetch again with offset 16000"}
    assert "next_offset" not in last["part"]


def test_a_gzip_body_is_inflated_within_the_cap(tmp_path):
    with web_server() as (base, _):
        data = web_fetch(ctx(tmp_path, max_bytes=5000), f"{base}/gzip")
    assert data["content"].strip() == "zipped" and "note" in data


def test_a_slow_page_stops_at_the_time_cap(tmp_path):
    with web_server() as (base, _), pytest.raises(ToolError, match="timed out"):
        web_fetch(ctx(tmp_path, timeout_s=1.0), f"{base}/slow")


def test_binary_pages_and_errors_are_refused_with_what_they_were(tmp_path):
    with web_server() as (base, _):
        with pytest.raises(ToolError, match="image/png"):
            web_fetch(ctx(tmp_path), f"{base}/png")
        with pytest.raises(ToolError, match="HTTP 404") as caught:
            web_fetch(ctx(tmp_path), f"{base}/missing")
    assert "No such page" in caught.value.hints["content"]


@pytest.mark.parametrize("url", ["ftp://example.com/x", "file:///etc/passwd", "example.com", "http://",
                                 "http://user:pw@example.com/", "http://exa mple.com/", "javascript:alert(1)"])
def test_urls_that_are_not_plain_http_are_refused(tmp_path, url):
    with pytest.raises(ToolError):
        web_fetch(ctx(tmp_path), url)


# -- what is refused by default ---------------------------------------------------------------------------------

@pytest.mark.parametrize("host", ["127.0.0.1", "10.0.0.1", "169.254.169.254", "localhost", "[::1]", "2130706433",
                                  "0.0.0.0", "192.168.1.1", "172.16.0.1", "100.64.0.1", "[::ffff:127.0.0.1]",
                                  "[fe80::1]", "127.1"])
def test_loopback_private_and_link_local_addresses_are_refused_by_default(tmp_path, host):
    with web_server() as (base, hits):
        port = base.rsplit(":", 1)[1]
        with pytest.raises(ToolError, match="refused"):
            web_fetch(ToolContext(Workspace(tmp_path)), f"http://{host}:{port}/page")
    assert hits == []  # nothing was even connected to


def test_a_local_server_is_refused_by_default_and_reached_when_the_user_allows_it(tmp_path):
    with web_server() as (base, hits):
        with pytest.raises(ToolError, match=r"loopback.*allow_private = true"):
            web_fetch(ToolContext(Workspace(tmp_path)), f"{base}/page")
        assert hits == []
        assert web_fetch(ctx(tmp_path), f"{base}/page")["status"] == 200


def test_link_local_is_refused_even_when_private_addresses_are_allowed(tmp_path):
    with web_server() as (base, hits), pytest.raises(ToolError, match="link-local"):
        web_fetch(ctx(tmp_path), f"{base}/to?u=http://169.254.169.254/latest/meta-data/")
    assert hits == ["/to?u=http://169.254.169.254/latest/meta-data/"]


@pytest.mark.parametrize(("address", "refused"), [
    ("93.184.216.34", False), ("2606:2800:220:1:248:1893:25c8:1946", False), ("127.0.0.1", True),
    ("10.1.2.3", True), ("169.254.169.254", True), ("::1", True), ("fd00::1", True), ("::ffff:10.0.0.1", True),
    ("224.0.0.1", True), ("255.255.255.255", True)])
def test_the_address_table(address, refused):
    assert (refusal(address, False) is not None) is refused
