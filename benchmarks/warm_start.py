"""Cold process to first reply: a new `cli-agent -p` process against the same first request sent straight to a
freshly started llama.cpp server.

    .venv/bin/python benchmarks/warm_start.py                 # Qwen2.5-Coder-1.5B, 3 rounds
    .venv/bin/python benchmarks/warm_start.py --model smollm2-135m --rounds 5 --json

Each round, alternating which side goes first:
- *cli-agent*: `python -m cli_agent --model local -p TASK --max-steps 1 --output json` in a fresh workspace, from
  process start to exit: import, model check, server start, slot restore, first request, one reply (so an upper
  bound of its first token). With `local.warm_start` (the default) the slot saved by the round before is restored.
- *direct*: the same server child (`python -m cli_agent.providers.local.engine`, llama.cpp's server from
  xllamacpp) started by hand with no slot file, polled until it answers, then the very body cli-agent sends first,
  POSTed with plain httpx, from process start to the first token and to the whole reply: every round evaluates the
  whole prompt, which is what a cold process pays.
The same temperature-0 request makes the same reply on both sides; medians are reported, with the one-minute load
average beside each figure (the machine may be shared: time figures are noisy).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from cli_agent.config.settings import LocalSettings, Settings
from cli_agent.contracts.messages import Message
from cli_agent.providers.base import ProviderRequest
from cli_agent.providers.local.model import ensure_model, resolve_model
from cli_agent.providers.local.provider import LOCAL_MODEL
from cli_agent.providers.local.reply import wire_options
from cli_agent.providers.local.server import default_threads
from cli_agent.providers.openai_http import OpenAIHTTPProvider

TASK = "What does app.py print? Answer in one word."


def ours(model: str, home: Path) -> float:
    with tempfile.TemporaryDirectory() as ws:
        Path(ws, "app.py").write_text('print("hi")\n')
        env = os.environ | {"CLI_AGENT_HOME": str(home), "CLI_AGENT_LOCAL_MODEL": model, "CI": "1"}
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "cli_agent", "--model", "local", "-p", TASK, "--max-steps", "1",
                        "--output", "json", "-C", ws], env=env, capture_output=True, check=False, timeout=900)
        return time.monotonic() - started


def first_body(model: str, home: Path) -> dict[str, object]:
    """The body cli-agent sends first for TASK (built without starting a server)."""
    from cli_agent.fs.workspace import Workspace
    from cli_agent.prompt.plan import Planner
    from cli_agent.tools.registry import Registry

    with tempfile.TemporaryDirectory() as ws:
        Path(ws, "app.py").write_text('print("hi")\n')
        settings = Settings(model="local", workspace=ws, local=LocalSettings(model=model))
        plan = Planner(settings, Registry.builtin(), Workspace(Path(ws)), "json")(TASK, None)
        request = ProviderRequest((Message("system", plan.system or ""), Message("user", TASK)),
                                  options=wire_options(plan.request_options))
        return OpenAIHTTPProvider(f"openai/{LOCAL_MODEL}", api_base="http://127.0.0.1:1/v1").request_body(request)


def direct(path: Path, body: dict[str, object]) -> tuple[float, float]:
    """Seconds from starting a bare server to the first token, and to the whole reply."""
    port = 18000 + os.getpid() % 1000
    started = time.monotonic()
    server = subprocess.Popen([sys.executable, "-m", "cli_agent.providers.local.engine", "--model", str(path),
                               "--port", str(port), "--ctx", "8192", "--threads", str(threads := default_threads()),
                               "--batch-threads", str(threads)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(timeout=900, trust_env=False) as client:
            while True:
                try:
                    if client.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.05)
            first = None
            with client.stream("POST", f"http://127.0.0.1:{port}/v1/chat/completions", json=body) as response:
                response.raise_for_status()
                for line in response.iter_lines():
                    if first is None and '"content":"' in line:
                        first = time.monotonic() - started
        total = time.monotonic() - started
        return (first or total), total
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = Path(os.environ.get("CLI_AGENT_HOME") or tempfile.mkdtemp(prefix="warm-start-home-"))
    os.environ["CLI_AGENT_HOME"] = str(home)
    path = ensure_model(resolve_model(args.model))
    body = first_body(args.model, home)
    ours(args.model, home)  # the first process ever: saves the slot the next ones restore
    times: dict[str, list[float]] = {"cli-agent (warm slot), whole reply": [], "direct (cold server), first token": [],
                                     "direct (cold server), whole reply": []}
    loads: dict[str, list[float]] = {name: [] for name in times}
    for n in range(args.rounds):
        for side in ("ours", "direct") if n % 2 == 0 else ("direct", "ours"):
            load = os.getloadavg()[0]
            if side == "ours":
                times["cli-agent (warm slot), whole reply"].append(ours(args.model, home))
                loads["cli-agent (warm slot), whole reply"].append(load)
            else:
                first, total = direct(path, body)
                times["direct (cold server), first token"].append(first)
                times["direct (cold server), whole reply"].append(total)
                for name in ("direct (cold server), first token", "direct (cold server), whole reply"):
                    loads[name].append(load)
    result = {name: round(statistics.median(values), 2) for name, values in times.items()}
    if args.json:
        print(json.dumps({"model": args.model, "rounds": args.rounds, "median_s": result, "all_s": times,
                          "load_1min": loads}))
    else:
        for name, value in result.items():
            each = ", ".join(f"{v:.1f} (load {load:.1f})" for v, load in zip(times[name], loads[name], strict=True))
            print(f"{name:<36} {value:>8.2f} s  (median of {args.rounds}: {each})")


if __name__ == "__main__":
    main()
