"""Cold process to first reply: a new `cli-agent -p` process against the same first request sent straight to a
freshly started llama.cpp server.

    .venv/bin/python benchmarks/warm_start.py                 # Qwen2.5-Coder-1.5B, 3 rounds
    .venv/bin/python benchmarks/warm_start.py --model smollm2-135m --rounds 5 --json

Each round, alternating which side goes first:
- *cli-agent*: `python -m cli_agent --model local -p TASK --max-steps 1 --output json` in a fresh workspace, from
  process start to exit: import, model check, server start, first request, one reply. With `local.warm_start`
  (the default) the evaluated prompt is restored from the user cache dir after the first round.
- *direct*: `python -m llama_cpp.server` started by hand, polled until it answers, then the very body cli-agent
  sends first, POSTed with plain httpx, from process start to the whole reply. It has no disk cache: every round
  evaluates the whole prompt, which is what a cold process paid before the warm start.
The same temperature-0 request makes the same reply on both sides; medians are reported.
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

from cli_agent.config import LocalSettings, Settings
from cli_agent.local_model import ensure_model, resolve_model
from cli_agent.messages import Message
from cli_agent.providers.base import ProviderRequest
from cli_agent.providers.local import LOCAL_MODEL, MAX_TOKENS, default_threads
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
    from cli_agent.prompt_plan import Planner
    from cli_agent.registry import Registry
    from cli_agent.sandbox import Workspace

    with tempfile.TemporaryDirectory() as ws:
        Path(ws, "app.py").write_text('print("hi")\n')
        settings = Settings(model="local", workspace=ws, local=LocalSettings(model=model))
        plan = Planner(settings, Registry.builtin(), Workspace(Path(ws)), "json")(TASK, None)
        options = {**plan.request_options, "max_tokens": MAX_TOKENS}
        request = ProviderRequest((Message("system", plan.system or ""), Message("user", TASK)), options=options,
                                  stream=False)
        return OpenAIHTTPProvider(f"openai/{LOCAL_MODEL}", api_base="http://127.0.0.1:1/v1").request_body(request)


def direct(path: Path, body: dict[str, object]) -> float:
    port = 18000 + os.getpid() % 1000
    started = time.monotonic()
    server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias",
                               LOCAL_MODEL, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
                               "--n_threads", str(default_threads())], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(timeout=900, trust_env=False) as client:
            while True:
                try:
                    if client.get(f"http://127.0.0.1:{port}/v1/models").status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.05)
            client.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body).raise_for_status()
        return time.monotonic() - started
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
    ours(args.model, home)  # the first process ever: fills the warm cache
    times: dict[str, list[float]] = {"cli-agent (warm cache)": [], "direct (cold server)": []}
    for n in range(args.rounds):
        sides = [("cli-agent (warm cache)", lambda: ours(args.model, home)),
                 ("direct (cold server)", lambda: direct(path, body))]
        for name, run in sides if n % 2 == 0 else sides[::-1]:
            times[name].append(run())
    result = {name: round(statistics.median(values), 2) for name, values in times.items()}
    if args.json:
        print(json.dumps({"model": args.model, "rounds": args.rounds, "median_s": result, "all_s": times}))
    else:
        for name, value in result.items():
            each = ", ".join(f"{v:.1f}" for v in times[name])
            print(f"{name:<24} {value:>8.2f} s  (median of {args.rounds}: {each})")


if __name__ == "__main__":
    main()
