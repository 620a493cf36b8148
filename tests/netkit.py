"""A small PEP 503 package index of one tiny wheel, served on a loopback address by a test server, and the
`pip download` command that fetches from it: for the sandbox's network by rule."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import sys
import threading
import zipfile
from pathlib import Path

INDEX_HOST = "127.0.0.2"  # a loopback address the sandbox's NO_PROXY does not name: its requests go to the proxy


def wheel_index(folder: Path) -> Path:
    name = "tinypkg-1.0-py3-none-any.whl"
    files = {"tinypkg/__init__.py": b"VALUE = 1\n",
             "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
             "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                              b"Tag: py3-none-any\n"}
    record = "".join(f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for path, data in files.items()) + "tinypkg-1.0.dist-info/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr("tinypkg-1.0.dist-info/RECORD", record)
    (folder / "simple" / "tinypkg").mkdir(parents=True)
    (folder / "simple" / "tinypkg" / name).write_bytes(buffer.getvalue())
    (folder / "simple" / "tinypkg" / "index.html").write_text(f'<a href="{name}">{name}</a>\n')
    (folder / "simple" / "index.html").write_text('<a href="tinypkg/">tinypkg</a>\n')
    return folder


class IndexServer:
    def __init__(self, root: Path, host: str) -> None:
        handler = lambda *a: _Quiet(*a, directory=str(root))  # noqa: E731
        self.httpd = http.server.ThreadingHTTPServer((host, 0), handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def pip_download(port: int, python: str = sys.executable) -> str:
    return (f"{python} -m pip download --no-deps --disable-pip-version-check --no-cache-dir --retries 0 "
            f"--timeout 5 --index-url http://{INDEX_HOST}:{port}/simple -d /tmp/dl tinypkg 2>&1 | tail -3; "
            f"ls /tmp/dl")
