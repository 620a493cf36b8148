"""One-shot trivial turn against Codex CLI, in one alternated run: `cli-agent -p "say hi"` against the loopback fake
OpenAI server, and `codex exec "say hi"` against a loopback stub of the Responses API (the only wire API Codex
speaks), each answering "Pong4711". Whole processes, measured one by one (wall, CPU, peak RSS), medians.

    python benchmarks/vs_codex.py [RUNS]          # codex from CODEX_BIN, else `codex` on PATH

Codex is kept on loopback: its own home (CODEX_HOME in a temp folder) names the stub as its only model provider,
and `--disable plugins --disable apps -c analytics.enabled=false -c check_for_update_on_startup=false` turn off its
start-up lookups of github.com and chatgpt.com. Install it beside the checkout, for example
`npm install --prefix ~/peers/codex @openai/codex` and `CODEX_BIN=~/peers/codex/node_modules/.bin/codex`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, Sample, bench_env, cli_command, emit, fake_model_dirs, load_note, measure, median

REPLY = "Pong4711"
RUNS = 7
WARMUP = 2
CODEX_FLAGS = ("--skip-git-repo-check", "--disable", "plugins", "--disable", "apps", "-c", "analytics.enabled=false",
               "-c", "check_for_update_on_startup=false")


def _event(kind: str, **data: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def responses_stream() -> bytes:
    """One finished assistant message saying REPLY, as the Responses API streams it."""
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}
    response = {"id": "resp_1", "object": "response", "created_at": int(time.time()), "model": "stub", "output": []}
    usage = {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens_details": {"reasoning_tokens": 0}}
    return b"".join([
        _event("response.created", response={**response, "status": "in_progress"}),
        _event("response.output_item.added", output_index=0, item={**item, "status": "in_progress", "content": []}),
        _event("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=REPLY),
        _event("response.output_item.done", output_index=0, item=item),
        _event("response.completed", response={**response, "status": "completed", "output": [item], "usage": usage}),
    ])


class _Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = responses_stream()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def codex_bin() -> str | None:
    return os.environ.get("CODEX_BIN") or shutil.which("codex")


def codex_home(folder: Path, port: int) -> Path:
    folder.mkdir()
    (folder / "config.toml").write_text(
        'model = "stub"\nmodel_provider = "stub"\n\n[model_providers.stub]\nname = "loopback stub"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nenv_key = "STUB_API_KEY"\nwire_api = "responses"\n')
    return folder


def measure_rows(runs: int = RUNS) -> list[Row]:
    what, target = "one-shot trivial turn vs Codex CLI", "≤ 1.0× Codex"
    codex = codex_bin()
    if codex is None:
        return [Row("vs_codex", what, "pending: Codex CLI not found (npm install --prefix DIR @openai/codex, then "
                    "CODEX_BIN=DIR/node_modules/.bin/codex)", target, None)]
    load_before = load_note()
    stub = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    ours: list[Sample] = []
    theirs: list[Sample] = []
    try:
        with fake_model_dirs(REPLY) as (url, home, ws), tempfile.TemporaryDirectory() as tmp:
            env = bench_env(home, CODEX_HOME=str(codex_home(Path(tmp, "codex-home"), stub.server_address[1])),
                            STUB_API_KEY="loopback")
            sides = [(ours, [*cli_command(), "-p", "say hi", "--model", "openai/x", "--api-base", url]),
                     (theirs, [codex, "exec", *CODEX_FLAGS, "say hi"])]
            for n in range(WARMUP + runs):
                for samples, argv in sides if n % 2 == 0 else sides[::-1]:
                    sample = measure(argv, env=env, cwd=ws)
                    if sample.code != 0 or REPLY not in sample.out:
                        raise SystemExit(f"{argv[0]} failed (exit {sample.code}): {sample.out[-400:]}")
                    if n >= WARMUP:
                        samples.append(sample)
    finally:
        stub.shutdown()
    wall, peer = median([s.wall for s in ours]), median([s.wall for s in theirs])
    cpu, peer_cpu = median([s.cpu for s in ours]), median([s.cpu for s in theirs])
    rss, peer_rss = max(s.rss_kib for s in ours) / 1024, max(s.rss_kib for s in theirs) / 1024
    return [Row("vs_codex", what, f"{wall:.3f} s vs Codex {peer:.3f} s", target, wall / peer,
                f"{runs} pairs alternated after {WARMUP} warm-up pairs, medians (ours min "
                f"{min(s.wall for s in ours):.3f} s, Codex min {min(s.wall for s in theirs):.3f} s); peak RSS "
                f"{rss:.0f} MiB vs {peer_rss:.0f} MiB; Codex on a loopback Responses stub, its start-up lookups off; "
                f"{load_before} before, {load_note()} after",
                cpu=f"{cpu:.3f} s vs {peer_cpu:.3f} s ({cpu / peer_cpu:.2f}×)")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))
