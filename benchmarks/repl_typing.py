"""Typing a long message in the REPL: 2,000 characters arrive in one write to its pseudo-terminal, without bracketed
paste (what a terminal that does not mark pastes, or very fast typing, delivers), then Enter. Measured: the time
from the write to the loopback fake model's reply on screen, minus the same for a 10-character message sent in the
same run (alternated); what is left is the cost of handling the 2,000 key presses. The child's CPU time gives the
same difference without the machine's load."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, emit, fake_model_dirs, median
from repl_ready import REPLY, WARMUP, pending
from repl_reply import reply_once

TARGET = 0.05  # seconds of input handling for the whole message
RUNS = 5
CHARS = 2000
LONG = ("please look at the parser and tell me why it drops the last token; " * 40)[:CHARS]
SHORT = "hello there"


def measure_rows(runs: int = RUNS) -> list[Row]:
    what, target = f"typing {CHARS:,} characters in the REPL (no bracketed paste)", f"≤ {TARGET * 1000:.0f} ms"
    missing = pending("repl_typing", what, target)
    if missing:
        return [missing]
    long_s: list[tuple[float, float]] = []
    short_s: list[tuple[float, float]] = []
    with fake_model_dirs(REPLY) as (url, home, ws):
        for _ in range(WARMUP):
            reply_once(url, home, ws, SHORT)
        for n in range(runs):
            pair = [(long_s, LONG), (short_s, SHORT)]
            for samples, message in pair if n % 2 == 0 else pair[::-1]:
                samples.append(reply_once(url, home, ws, message))
    wall = median([s[0] for s in long_s]) - median([s[0] for s in short_s])
    cpu = median([s[1] for s in long_s]) - median([s[1] for s in short_s])
    return [Row("repl_typing", what, f"{wall * 1000:.0f} ms", target, max(wall, 0.0) / TARGET,
                f"reply on screen after a {CHARS:,}-character message, median "
                f"{median([s[0] for s in long_s]):.3f} s, minus after a {len(SHORT)}-character one, "
                f"{median([s[0] for s in short_s]):.3f} s; {runs} pairs, alternated, after {WARMUP} warm-up; CPU: "
                "the child's, the same difference (/proc, 10 ms ticks)", cpu=f"{cpu * 1000:.0f} ms")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))
