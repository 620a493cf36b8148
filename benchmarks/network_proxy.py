"""What the command sandbox's network proxy costs: `pip download` of a small local package from a PEP 503 index on
a loopback address, through the proxy (a `[sandbox.network] allow` rule naming the index) against direct (the
host's whole network, `sandbox.network = true`), both inside the sandbox, as a ratio in one run.

The pairs alternate (direct, proxied, direct, ...) so load drifts hit both alike; the figure is the ratio of the
medians. Proxied includes all the proxy adds to a command: the relay started in front of it, the request judged,
resolved and checked, and each byte relayed twice (relay, proxy).

    python benchmarks/network_proxy.py [RUNS]
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, emit, load_note, median

RATIO_TARGET = 1.2
RUNS = 7
HOST = "127.0.0.2"  # not in the sandbox's NO_PROXY: the proxied run goes through the proxy
PAYLOAD = 2 * 1024 * 1024  # the wheel's size: a module of random-looking bytes, so the copy is measured too


def _index(root: Path) -> None:
    name = "benchpkg-1.0-py3-none-any.whl"
    blob = (hashlib.sha256(b"seed").hexdigest() * (PAYLOAD // 64)).encode()
    files = {"benchpkg/__init__.py": b"DATA = '" + blob + b"'\n",
             "benchpkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: benchpkg\nVersion: 1.0\n",
             "benchpkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\n"
                                               b"Tag: py3-none-any\n"}
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},"
                     f"{len(d)}\n" for p, d in files.items()) + "benchpkg-1.0.dist-info/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr("benchpkg-1.0.dist-info/RECORD", record)
    (root / "simple" / "benchpkg").mkdir(parents=True)
    (root / "simple" / "benchpkg" / name).write_bytes(buffer.getvalue())
    (root / "simple" / "benchpkg" / "index.html").write_text(f'<a href="{name}">{name}</a>\n')


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def _run(command: str, workspace: Path, network: bool, net: object) -> float:
    from cli_agent.sandbox import Policy, probe, run_in_sandbox
    from cli_agent.sandbox.process import Limits

    started = time.perf_counter()
    running = run_in_sandbox(command, probe(), Policy(workspace=workspace, network=network), Limits(timeout_s=300),
                             lambda *_: None, net=net)  # type: ignore[arg-type]
    while True:
        try:
            next(running)
        except StopIteration as done:
            if done.value.outcome.exit_code != 0:
                raise SystemExit(f"pip download failed in the sandbox:\n{done.value.outcome.output[-2000:]}") from None
            return time.perf_counter() - started


def measure_rows(runs: int) -> list[Row]:
    from cli_agent.sandbox import NetRules, SessionNet, probe

    if not probe().available:
        return [Row("network_proxy", "network proxy", "no sandbox here", "-", None, probe().reason)]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _index(root / "index")
        (root / "ws").mkdir()
        httpd = http.server.ThreadingHTTPServer((HOST, 0), lambda *a: _Quiet(*a, directory=str(root / "index")))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        port = httpd.server_address[1]
        net = SessionNet(NetRules((f"{HOST}:{port}",)))
        command = (f"{sys.executable} -m pip download --no-deps --disable-pip-version-check --no-cache-dir "
                   f"--retries 0 --index-url http://{HOST}:{port}/simple -d /tmp/dl benchpkg >/dev/null")
        direct, proxied = [], []
        try:
            for _ in range(runs):
                direct.append(_run(command, root / "ws", True, None))
                proxied.append(_run(command, root / "ws", False, net))
        finally:
            net.close()
            httpd.shutdown()
            httpd.server_close()
    ratio = median(proxied) / median(direct)
    return [Row("network_proxy", f"network proxy: pip download of a {PAYLOAD >> 20} MiB local package, proxied vs "
                "direct (sandbox.network = true)", f"{ratio:.2f}×", f"≤ {RATIO_TARGET}×", ratio / RATIO_TARGET,
                f"median of {runs} alternated pairs: {median(proxied):.2f} s vs {median(direct):.2f} s; "
                f"{load_note()}")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))
