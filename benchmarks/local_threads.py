"""Threads for the local model, by measurement: prompt evaluation and generation with 1 and 2 threads.

    .venv/bin/python benchmarks/local_threads.py                          # Qwen2.5-Coder-1.5B, 2 rounds
    .venv/bin/python benchmarks/local_threads.py --model smollm2-135m --threads 1 2 4 --rounds 3 --json

For each thread count a server (`python -m cli_agent.providers.local.engine`, the child cli-agent starts) is started
with that many threads for generating and for evaluating prompts, and sent the same request: a ~600-token prompt
evaluated whole (`cache_prompt: false`), then 64 tokens generated at temperature 0. The rates are llama.cpp's own
(`timings.prompt_per_second`, `timings.predicted_per_second`): the model's time, not the HTTP's. Rounds alternate the
order of the thread counts; the one-minute load average is printed beside each figure, since the threads compete
with whatever else the machine runs (idle and busy machines give different answers: run it on both).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import httpx

from cli_agent.providers.local.model import ensure_model, resolve_model
from cli_agent.providers.local.provider import LOCAL_MODEL
from cli_agent.providers.local.reply import wire_options

PROMPT = "\n".join(f"def f{i}(x):\n    return x * {i} + {i % 7}\n" for i in range(40))


def measure(path: str, threads: int) -> dict[str, float]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "cli_agent.providers.local.engine", "--model", path,
                               "--port", str(port), "--ctx", "4096", "--threads", str(threads),
                               "--batch-threads", str(threads)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        with httpx.Client(trust_env=False, timeout=900) as client:
            while True:
                try:
                    if client.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if server.poll() is not None:
                    raise SystemExit(f"the server exited with code {server.returncode}")
                time.sleep(0.1)
            load = os.getloadavg()[0]
            body: dict[str, Any] = {"model": LOCAL_MODEL, "messages": [
                {"role": "system", "content": "You are a coding assistant."},
                {"role": "user", "content": f"{PROMPT}\nWrite a docstring for f3."}]}
            body |= wire_options({"max_tokens": 64}) | {"cache_prompt": False, "ignore_eos": True, "stream": False}
            timings = client.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body).json()["timings"]
        return {"prompt_tokens": timings["prompt_n"], "prompt_per_s": timings["prompt_per_second"],
                "generated": timings["predicted_n"], "generate_per_s": timings["predicted_per_second"],
                "load_1min": load}
    finally:
        server.terminate()
        server.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    path = str(ensure_model(resolve_model(args.model)))
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in args.threads}
    for r in range(args.rounds):
        for n in args.threads if r % 2 == 0 else args.threads[::-1]:
            runs[n].append(measure(path, n))
    if args.json:
        print(json.dumps({"model": args.model, "runs": runs}, indent=2))
        return 0
    print(f"model {args.model}, {args.rounds} rounds (medians; each run's one-minute load average)")
    for n, values in runs.items():
        prompt = statistics.median(v["prompt_per_s"] for v in values)
        generate = statistics.median(v["generate_per_s"] for v in values)
        loads = ", ".join(f"{v['load_1min']:.1f}" for v in values)
        print(f"  {n} thread(s): prompt {prompt:7.1f} tokens/s, generation {generate:6.1f} tokens/s  (load {loads})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
