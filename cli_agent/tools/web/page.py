"""What web_fetch gives the model: a fetched page as Markdown (HTML, converted by html-to-markdown) or as the text
it is (plain text, JSON, XML), with where it came from. Anything else (an image, a PDF, an archive) is refused
with its type and size."""

from __future__ import annotations

import codecs
import re
import time
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import ToolError
from cli_agent.tools.web.address import WebSetup

if TYPE_CHECKING:
    from cli_agent.tools.context import ToolContext
    from cli_agent.tools.web.fetch import Fetched

_HTML = ("text/html", "application/xhtml+xml")
_TEXT = re.compile(r"^(text/.*|application/(json|xml|javascript|x-javascript|ld\+json|toml|yaml|x-yaml|x-sh)"
                   r"|application/[\w.+-]+\+(json|xml))$")
_TITLE = re.compile(r"<title[^>]*>(.{0,300}?)</title", re.IGNORECASE | re.DOTALL)
_DROPPED = ["script", "style", "noscript", "template", "svg", "iframe", "nav", "form", "button"]


PART_CHARS = 16_000  # characters of the page's text a call returns; `offset` reads on


def web_fetch(ctx: ToolContext, url: str, offset: int = 0) -> dict[str, Any]:
    """Fetch `url` and return its text for the model, from character `offset` on, at most PART_CHARS of it."""
    from cli_agent.tools.web.fetch import fetch  # deferred: the HTTP/TLS stack loads when a page is first fetched

    setup = ctx.web or WebSetup()
    deadline = min(time.monotonic() + setup.timeout_s, ctx.deadline or float("inf"))
    net = ctx.commands.net if ctx.commands is not None else None  # commands' loopback is the session's
    return page_data(fetch(url, setup, deadline, net), offset)


def page_data(page: Fetched, offset: int = 0) -> dict[str, Any]:
    text = page.body.decode(_codec(page.charset), errors="replace")
    head: dict[str, Any] = {"url": page.url, "status": page.status, "content_type": page.content_type or "unknown"}
    if page.redirects:
        head["redirected"] = list(page.redirects)
    if page.status >= 400:
        raise ToolError(f"HTTP {page.status} {page.reason} from {page.url}", **head,
                        content=_converted(page, text)[:2000])
    if not (page.content_type in _HTML or _TEXT.match(page.content_type) or not page.content_type):
        raise ToolError(f"{page.url} is {page.content_type} ({len(page.body):,} bytes): web_fetch returns text "
                        f"pages only (HTML, plain text, JSON, XML)", **head)
    title = _TITLE.search(text[:65536]) if page.content_type in _HTML else None
    if title:
        import html  # deferred: html.entities' table (about 1.5 ms) loads with the first page that has a title

        head["title"] = " ".join(html.unescape(title.group(1)).split())
    content = _converted(page, text)
    if offset > len(content):
        raise ToolError(f"offset {offset:,} is past the end of the page's text ({len(content):,} characters)")
    head["content"] = content[offset:offset + PART_CHARS]
    if offset or len(content) > offset + PART_CHARS:
        head["part"] = {"offset": offset, "total_chars": len(content)}
        if len(content) > offset + PART_CHARS:
            head["part"]["next_offset"] = offset + PART_CHARS
            head["part"]["note"] = f"more follows: call web_fetch again with offset {offset + PART_CHARS}"
    if page.truncated:
        head["note"] = f"the page is larger than {len(page.body):,} bytes; only its start was read"
    return head


def _codec(charset: str | None) -> str:
    try:
        return codecs.lookup(charset or "utf-8").name
    except LookupError:
        return "utf-8"


def _converted(page: Fetched, text: str) -> str:
    html_page = page.content_type in _HTML or (not page.content_type and "<html" in text[:2048].lower())
    return to_markdown(text, page.url) if html_page else text


def to_markdown(markup: str, base_url: str | None = None) -> str:
    """HTML as Markdown: headings, lists, links, code and tables kept; scripts, styles, navigation and images
    dropped."""
    from html_to_markdown import ConversionOptions, convert  # deferred: only when a page is fetched

    options = ConversionOptions(heading_style="atx", skip_images=True, compact_tables=True, extract_metadata=False,
                                strip_tags=_DROPPED, base_url=base_url)
    result: Any = convert(markup, options)
    content = result.content if hasattr(result, "content") else result
    return re.sub(r"\n{3,}", "\n\n", str(content)).strip() + "\n"
