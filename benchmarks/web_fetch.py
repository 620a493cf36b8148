"""web_fetch's cost: a ~100 KB documentation-like page (headings, paragraphs, a 200-row table, code blocks, lists,
navigation and scripts) fetched from a loopback server and turned into Markdown, and the conversion alone. With
`--compare`, the same page through the other converters measured when html-to-markdown was chosen (markdownify
and html2text, when they are importable: they are not dependencies).

    python benchmarks/web_fetch.py [--runs N] [--compare] [--file PAGE.html]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def page() -> str:
    rows = "".join(f"<tr><td><code>target-{n}</code></td><td>Tier {n % 3 + 1}</td><td>notes about {n}</td></tr>"
                   for n in range(200))
    sections = "".join(
        f"<h2 id='s{n}'>Section {n}</h2><p>Paragraph {n} with <a href='/doc/{n}'>a link</a>, <b>bold</b> and "
        f"<em>emphasis</em> text that goes on for a while to look like prose in a manual.</p>"
        f"<pre><code>def f{n}(x):\n    return x * {n}\n</code></pre><ul><li>one</li><li>two</li><li>three</li></ul>"
        for n in range(200))
    return (f"<html><head><title>Platform support</title><style>body{{margin:0}}</style>"
            f"<script>var a = 1;</script></head><body><nav>Home | Docs | Blog</nav><h1>Platform support</h1>"
            f"{sections}<table><tr><th>target</th><th>tier</th><th>notes</th></tr>{rows}</table></body></html>")


@contextlib.contextmanager
def _serving(folder: Path) -> Iterator[str]:
    """A loopback server of `folder`'s files, for the `with` block: its base URL."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def timed(fn: Callable[[], object], runs: int) -> float:
    fn()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--file", type=Path)
    args = parser.parse_args()
    html = args.file.read_text(encoding="utf-8") if args.file else page()
    from cli_agent.fs.workspace import Workspace
    from cli_agent.tools.context import ToolContext
    from cli_agent.tools.web.fetch import WebSetup
    from cli_agent.tools.web.page import to_markdown, web_fetch

    print(f"page: {len(html.encode()):,} bytes of HTML; Markdown: {len(to_markdown(html)):,} characters")
    print(f"html-to-markdown convert: {timed(lambda: to_markdown(html), args.runs):.1f} ms (median of {args.runs})")
    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "page.html"
        served.write_text(html, encoding="utf-8")
        ctx = ToolContext(Workspace(Path(tmp)), web=WebSetup(allow_private=True))
        with _serving(Path(tmp)) as base:
            ms = timed(lambda: web_fetch(ctx, f"{base}/page.html"), args.runs)
        print(f"web_fetch of a loopback page (fetch + convert): {ms:.1f} ms (median of {args.runs})")
    if args.compare:
        try:
            from markdownify import markdownify

            print(f"markdownify: {timed(lambda: markdownify(html, heading_style='ATX'), args.runs):.1f} ms")
        except ImportError:
            print("markdownify: not installed")
        try:
            import html2text

            def h2t() -> str:
                converter = html2text.HTML2Text()
                converter.body_width = 0
                return converter.handle(html)

            print(f"html2text: {timed(h2t, args.runs):.1f} ms")
        except ImportError:
            print("html2text: not installed")


if __name__ == "__main__":
    main()
