"""Prompt build with 50 tool specs: cold (a new PromptBuilder's first build) and cached (the same context again).

50 specs are generated into a temp folder (five categories, a fifth of them optional with hints, three parameters
each with an enum and a default, one example), loaded through the real `Registry.load` with fake handlers of the
matching signature, and rendered for a context like a run's: a task, 120 workspace files, AGENTS.md, two facts.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, emit, median

TARGET_COLD_MS = 20.0
TARGET_CACHED_MS = 0.1
TOOLS = 50
COLD_RUNS = 25
CACHED_CALLS = 2000

SPEC = '''\
name = "tool_{n:02d}"
category = "{category}"
description = "Does thing number {n} to a file of the workspace. It reads the file and reports what it found."
when_to_use = "When the task needs thing {n} done to a file."
optional = {optional}
hints = {hints}

[parameters]
type = "object"
required = ["path"]
additionalProperties = false

[parameters.properties.path]
type = "string"
description = "The file, relative to the workspace root."

[parameters.properties.count]
type = "integer"
description = "How many times."
default = 1
minimum = 1

[parameters.properties.mode]
type = "string"
description = "How thoroughly."
enum = ["fast", "careful", "exhaustive"]
default = "fast"

[[examples]]
description = "Thing {n} on the README"
input = {{ path = "README.md", count = 2 }}
'''


def fake_handler(ctx: Any, path: str, count: int = 1, mode: str = "fast") -> dict[str, Any]:
    return {"path": path, "count": count, "mode": mode}


def make_registry(folder: Path) -> Any:
    from cli_agent.tools.registry import Registry

    categories = ("Explore", "Edit", "Build", "Test", "Project knowledge")
    for n in range(TOOLS):
        optional = n % 5 == 4
        hints = f'["thing {n}", "tool_{n:02d}"]' if optional else "[]"
        text = SPEC.format(n=n, category=categories[n % 5], optional=str(optional).lower(), hints=hints)
        (folder / f"tool_{n:02d}.toml").write_text(text)
    return Registry.load([folder], {f"tool_{n:02d}": fake_handler for n in range(TOOLS)})


def context() -> Any:
    from cli_agent.prompt.builder import PromptContext

    files = tuple(f"src/pkg{n // 10}/module_{n}.py" for n in range(120))
    return PromptContext(protocol="native", task="add a test for the parser, then run thing 4", files=files,
                         agents_md="# Conventions\nUse 4 spaces. Keep functions short.\n" * 10,
                         facts=("the package targets Python 3.11", "tests use pytest"), workspace_name="project")


def measure_rows(cold_runs: int = COLD_RUNS, cached_calls: int = CACHED_CALLS) -> list[Row]:
    from cli_agent.prompt.builder import PromptBuilder

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        registry = make_registry(Path(tmp))
        load_ms = (time.perf_counter() - started) * 1000
    ctx = context()
    PromptBuilder(registry).build(ctx)  # first use of the code paths, outside the measurement
    cold, cold_cpu = [], []
    for _ in range(cold_runs):
        builder = PromptBuilder(registry)
        started, cpu = time.perf_counter(), time.thread_time()
        built = builder.build(ctx)
        cold.append((time.perf_counter() - started) * 1000)
        cold_cpu.append((time.thread_time() - cpu) * 1000)
    assert len(built.tools) == TOOLS - TOOLS // 5 + 1, len(built.tools)  # required ones + the hinted optional one
    batches, batches_cpu = [], []
    for _ in range(5):
        started, cpu = time.perf_counter(), time.thread_time()
        for _ in range(cached_calls // 5):
            builder.build(ctx)
        batches.append((time.perf_counter() - started) * 1000 / (cached_calls // 5))
        batches_cpu.append((time.thread_time() - cpu) * 1000 / (cached_calls // 5))
    assert builder.renders == 1
    other = [replace(ctx, task=f"another task {n}") for n in range(cached_calls)]  # the same tools, other words
    started = time.perf_counter()
    for each in other:
        builder.build(each)
    same_tools_us = (time.perf_counter() - started) * 1e6 / len(other)
    started = time.perf_counter()
    for _ in range(20):
        built.schemas  # noqa: B018 - a fresh copy at each access, what the planner takes once a run
    copy_us = (time.perf_counter() - started) * 1e6 / 20
    cold_ms, cached_ms = median(cold), median(batches)
    detail = (f"{len(built.tools)} of {TOOLS} tools offered, {len(built.system):,} characters; cold: median of "
              f"{cold_runs} new builders; cached: median of 5 batches of {cached_calls // 5}; loading and validating "
              f"the 50 specs: {load_ms:.0f} ms")
    return [Row("prompt_cold", "prompt build, 50 specs, cold", f"{cold_ms:.2f} ms", f"≤ {TARGET_COLD_MS:g} ms",
                cold_ms / TARGET_COLD_MS, detail, cpu=f"{median(cold_cpu):.2f} ms"),
            Row("prompt_cached", "prompt build, 50 specs, cached", f"{cached_ms * 1000:.1f} µs",
                f"≤ {TARGET_CACHED_MS * 1000:g} µs", cached_ms / TARGET_CACHED_MS,
                f"the same context again; another task selecting the same tools (no render): {same_tools_us:.0f} µs; "
                f"reading .schemas (a deep copy, once a run): {copy_us:.0f} µs",
                cpu=f"{median(batches_cpu) * 1000:.1f} µs")]


if __name__ == "__main__":
    emit(measure_rows())
