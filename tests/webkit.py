"""A small HTTP server on a loopback (or a namespace's) address that the test starts and stops: pages, redirects,
big, slow, gzip and binary bodies, and a count of the requests it served."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE = ("<html><head><title>Release notes &amp; more</title><style>p{color:red}</style></head><body>"
        "<nav>Home | Docs</nav><h1>Version 2.0</h1><p>The <code>parse()</code> function now takes "
        "<a href=\"/api\">a strict flag</a>.</p><ul><li>faster</li><li>smaller</li></ul>"
        "<script>steal()</script><img src=\"x.png\"></body></html>")


class _Handler(BaseHTTPRequestHandler):
    hits: list[str]

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        route = url.path
        if route == "/page":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif route == "/text":
            self._send(200, "plain words, é\n".encode("latin-1"), "text/plain; charset=latin-1")
        elif route == "/json":
            self._send(200, b'{"version": "2.0"}', "application/json")
        elif route == "/to":
            self._send(int(query.get("code", "302")), b"", "text/plain", Location=query["u"])
        elif route == "/loop":
            self._send(302, b"", "text/plain", Location="/loop")
        elif route == "/big":
            self._send(200, b"x" * int(query["n"]), "text/plain")
        elif route == "/gzip":
            self._send(200, gzip.compress(b"<p>zipped</p>" + b" " * 100_000), "text/html", Content_Encoding="gzip")
        elif route == "/png":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "image/png")
        elif route == "/missing":
            self._send(404, b"<h1>No such page</h1>", "text/html")
        elif route == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b"drip\n")
                self.wfile.flush()
                time.sleep(0.2)
        else:
            self._send(404, b"not here", "text/plain")


@contextmanager
def web_server(host: str = "127.0.0.1", port: int = 0) -> Iterator[tuple[str, list[str]]]:
    """(the server's base URL, the paths it was asked for), for the `with` block."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    server.hits = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}", server.hits  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
