"""One trivial turn through `cli-agent acp` (an editor's way in) against the same turn through `-p`, both on the
instant loopback fake model.

Three figures, each the median of N runs after warm-up runs:
- `-p`: the whole process, `cli-agent -p hi` (what benchmarks/oneshot.py measures);
- ACP, whole process: spawn `cli-agent acp`, initialize, session/new, session/prompt, close stdin, exit, driven by
  the ACP SDK's own client over real stdio;
- ACP, warm turn: session/prompt to its response in a process already serving (what an editor's user waits for
  after the first turn).

    python benchmarks/acp_turn.py [RUNS]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, bench_env, cli_command, emit, fake_model_dirs, measure_ok, median

TARGET_WARM = 0.05  # seconds: the warm turn adds no more than a frame's worth to the model's own time
RUNS = 7
WARMUP = 2


class _Quiet:
    """The client side: takes the updates, collects the answer's text."""

    def __init__(self) -> None:
        self.text = ""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk":
            self.text += update.content.text

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a trivial turn asks nothing")


async def _acp(url: str, home: Path, ws: Path, turns: int) -> list[float]:
    """The prompt round trip of each of `turns` turns in one `cli-agent acp` process."""
    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

    command, *args = [*cli_command(), "--model", "openai/x", "--api-base", url, "acp"]
    client = _Quiet()
    rounds: list[float] = []
    async with spawn_agent_process(client, command, *args, env=bench_env(home), cwd=ws,
                                   transport_kwargs={"stderr": None}) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(ws))
        for _ in range(turns):
            sent = time.perf_counter()
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
            rounds.append(time.perf_counter() - sent)
            if done.stop_reason != "end_turn" or "hi" not in client.text:
                raise SystemExit(f"the ACP turn failed: {done.stop_reason}, {client.text!r}")
        process.stdin.close()
        await process.wait()
    return rounds


def _acp_whole(url: str, home: Path, ws: Path) -> float:
    """Spawn to exit, one turn."""
    started = time.perf_counter()
    asyncio.run(_acp(url, home, ws, 1))
    return time.perf_counter() - started


def measure_rows(runs: int = RUNS) -> list[Row]:
    with fake_model_dirs("hi") as (url, home, ws):
        argv = [*cli_command(), "-p", "hi", "--model", "openai/x", "--api-base", url]
        for _ in range(WARMUP):
            measure_ok(argv, home, ws, "hi", "cli-agent -p")
            _acp_whole(url, home, ws)
        oneshot = median([measure_ok(argv, home, ws, "hi", "cli-agent -p").wall for _ in range(runs)])
        whole = median([_acp_whole(url, home, ws) for _ in range(runs)])
        rounds = asyncio.run(_acp(url, home, ws, runs + WARMUP))
    warm = statistics.median(rounds[WARMUP:])
    return [Row("acp_turn", "one trivial turn over ACP (warm process), vs -p", f"{warm * 1000:.1f} ms warm turn",
                f"≤ {TARGET_WARM * 1000:.0f} ms", warm / TARGET_WARM,
                f"ACP whole process (spawn, initialize, session/new, prompt, exit) {whole:.3f} s vs `-p` whole process "
                f"{oneshot:.3f} s; first ACP turn {rounds[0] * 1000:.0f} ms; medians of {runs} runs after "
                f"{WARMUP} warm-up runs")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))
