"""Loop overhead: 500 steps of `read_file` with the scripted provider, minus provider and tool time.

One run of a real session (`open_session`: dispatcher, approval policy, trace written to a file) whose scripted
model asks for `read_file` 500 times, then answers. The provider's time (inside its `stream`, including its
conversation checks) and the tool's time (inside the `read_file` handler) are measured in the same run by thin
timing wrappers and subtracted; what remains is the loop: protocol, dispatch and validation, approval, events, trace.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, emit, median

TARGET_MS = 2.0  # per step
STEPS = 500
RUNS = 3


class Clock:
    """Wall and CPU seconds (this thread's) added up over the timed sections."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> Clock:
        self._started = (time.perf_counter(), time.thread_time())
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._started[0]
        self.cpu += time.thread_time() - self._started[1]


class TimedProvider:
    """A provider that adds up the time spent inside the wrapped provider's `stream`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.clock = Clock()

    def stream(self, request: Any) -> Iterator[Any]:
        items = iter(self.inner.stream(request))
        while True:
            with self.clock:
                item = next(items, None)
            if item is None:
                return
            yield item

    def supports_native_tools(self) -> bool:
        return self.inner.supports_native_tools()

    def context_window(self) -> int | None:
        return self.inner.context_window()

    def close(self) -> None:
        self.inner.close()


def timed(handler: Callable[..., Any], clock: Clock) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        with clock:
            return handler(*args, **kwargs)

    return run


def one_run(tmp: Path, steps: int) -> tuple[Clock, Clock, Clock]:
    """The total, provider and tool clocks of one scripted run of `steps` read_file steps."""
    from cli_agent.config.settings import Settings
    from cli_agent.providers.scripted import ScriptedProvider
    from cli_agent.session.session import drive, open_session
    from cli_agent.tools.registry import Registry

    ws = tmp / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "notes.txt").write_text("".join(f"line {n}: some text of a small source file\n" for n in range(40)))
    replies = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}] * steps
    provider = TimedProvider(ScriptedProvider([*replies, {"text": "done"}]))
    settings = Settings(model="scripted", workspace=str(ws), max_steps=steps + 1, timeout=3600,
                        trace=str(tmp / "trace.jsonl"))
    session = open_session(settings, interactive=False, provider_factory=lambda _: provider, record=False)
    tool_clock = Clock()
    builtin = session.registry
    handlers = {name: timed(builtin.handler(name), tool_clock) for name in builtin.names()}
    session.agent.setup.dispatcher.registry = Registry(builtin.specs(), handlers)
    try:
        with Clock() as total:
            finished = drive(session.run("read notes.txt again and again", None), session.trace)
    finally:
        session.close()
    if finished.stop_reason.value != "done" or finished.steps != steps + 1:
        raise SystemExit(f"the scripted run ended early: {finished.stop_reason} after {finished.steps} steps "
                         f"({finished.message})")
    return total, provider.clock, tool_clock


def measure_rows(runs: int = RUNS, steps: int = STEPS) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CLI_AGENT_HOME"] = str(Path(tmp, "home"))
        one_run(Path(tmp, "warm"), 5)  # imports and the registry, outside the measurement
        results = []
        for n in range(runs):
            results.append(one_run(Path(tmp, str(n)), steps))
    per_step = median([(total.wall - provider.wall - tool.wall) / steps * 1000 for total, provider, tool in results])
    cpu = median([(total.cpu - provider.cpu - tool.cpu) / steps * 1000 for total, provider, tool in results])
    total, provider, tool = sorted(results, key=lambda r: r[0].wall)[len(results) // 2]
    return [Row("loop", f"loop overhead ({steps} read_file steps)", f"{per_step:.2f} ms per step",
                f"≤ {TARGET_MS:g} ms", per_step / TARGET_MS,
                f"median of {runs} runs. The median run: "
                f"{total.wall * 1000 / steps:.2f} ms/step in all, of which provider "
                f"{provider.wall * 1000 / steps:.2f} ms and read_file {tool.wall * 1000 / steps:.2f} ms",
                cpu=f"{cpu:.2f} ms")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))
