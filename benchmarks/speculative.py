"""Draft-free speculative decoding (llama.cpp's n-gram lookup) on rewrite requests: generated tokens per second with
and without, alternated in one run, the same replies on every side.

    .venv/bin/python benchmarks/speculative.py                       # Qwen2.5-Coder-1.5B, 3 rounds, 3 types
    .venv/bin/python benchmarks/speculative.py --rounds 2 --types off,ngram_simple --json

Each round starts the bundled model's server child (`LlamaServer`, llama.cpp's server from xllamacpp) once per
speculative type, in an order rotated every round, and sends it the whole-definition rewrite requests of
`REWRITES` (the rewrite candidate's own system prompt and request layout, `agent.judge.rewrite`), at temperature 0.
Generated tokens per second are llama.cpp's own (`timings.predicted_per_second`, `predicted_n`); per type: the
median of the requests' rates, the rate over all its requests (their tokens over their generating time: what a
candidate's time buys), each with its ratio to `off`, and whether every type gave the same replies (lookup decoding
must not change them).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import sys
import time

import httpx

from cli_agent.agent.judge.rewrite import MAX_REPLY_TOKENS, SYSTEM
from cli_agent.prompt.project_tests import find_test_command
from cli_agent.providers.context_fit import fitted
from cli_agent.providers.local.model import ensure_model, resolve_model
from cli_agent.providers.local.server import LlamaServer, default_threads


def _request(task: str, code: str) -> list[dict[str, str]]:
    user = f"{task}\n\nThe code it is about (docstrings left out):\n```python\n{code}\n```"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _source(function: object) -> str:
    lines = inspect.getsource(function).split("\n")  # type: ignore[arg-type]
    return "\n".join(line for line in lines if '"""' not in line and not line.lstrip().startswith("`"))


# a short function, and two longer ones, each with the one-line bug a task states
REWRITES = [
    ("mean([1, 2, 3]) returns 1.5, it should be 2. Fix mean.",
     "def mean(values):\n    if not values:\n        raise ValueError('mean of nothing')\n    total = 0\n"
     "    for value in values:\n        total += value\n    return total / (len(values) + 1)\n"),
    ("find_test_command(root) ignores the environment it is given: it should pass `environ` on. Fix it.",
     _source(find_test_command).replace("os.environ if environ is None else environ", "os.environ")),
    ("fitted() cuts the system prompt too: it must never cut a message whose role is system. Fix fitted.",
     _source(fitted).replace('if i < 0 or out[i].role == "system":', "if i < 0:")),
]


def one(server: LlamaServer, messages: list[dict[str, str]]) -> tuple[float, int, str]:
    body = {"model": "local", "messages": messages, "temperature": 0.0, "top_k": 1, "seed": 0,
            "max_tokens": MAX_REPLY_TOKENS, "stream": False, "cache_prompt": False}
    reply = httpx.post(f"{server.api_base}/chat/completions", json=body, timeout=900).json()
    timings = reply.get("timings", {})
    return float(timings.get("predicted_per_second", 0.0)), int(timings.get("predicted_n", 0)), \
        reply["choices"][0]["message"]["content"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--types", default="off,ngram_simple,ngram_mod")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    path = ensure_model(resolve_model(args.model), quiet=True)
    kinds = args.types.split(",")
    rates: dict[str, list[float]] = {k: [] for k in kinds}
    seconds: dict[str, float] = dict.fromkeys(kinds, 0.0)
    tokens: dict[str, int] = dict.fromkeys(kinds, 0)
    replies: dict[str, list[str]] = {k: [] for k in kinds}
    loads: list[float] = []
    for round_ in range(args.rounds):
        for kind in kinds[round_ % len(kinds):] + kinds[:round_ % len(kinds)]:
            server = LlamaServer(path, threads=default_threads(), context_size=8192, speculative=kind)
            server.start()
            try:
                server.wait_ready(300)
                for task, code in REWRITES:
                    rate, count, text = one(server, _request(task, code))
                    rates[kind].append(rate)
                    tokens[kind] += count
                    seconds[kind] += count / rate if rate else 0.0
                    if round_ == 0:
                        replies[kind].append(text)
                    loads.append(os.getloadavg()[0])
                    print(f"round {round_ + 1} {kind:>12}: {rate:6.2f} tokens/s ({count} tokens)", file=sys.stderr,
                          flush=True)
            finally:
                server.stop()
    overall = {kind: tokens[kind] / seconds[kind] if seconds[kind] else 0.0 for kind in kinds}
    base = statistics.median(rates["off"]) if "off" in rates else None
    result = {kind: {"median_tokens_per_s": round(statistics.median(r), 2),
                     "ratio_to_off": round(statistics.median(r) / base, 2) if base else None,
                     "overall_tokens_per_s": round(overall[kind], 2),
                     "overall_ratio_to_off": round(overall[kind] / overall["off"], 2) if overall.get("off") else None,
                     "same_replies_as_off": replies[kind] == replies.get("off", replies[kind])}
              for kind, r in rates.items()}
    summary = {"model": args.model, "rounds": args.rounds, "requests": len(REWRITES), "types": result,
               "load": [round(min(loads), 1), round(max(loads), 1)], "time": time.strftime("%Y-%m-%d")}
    print(json.dumps(summary) if args.json else json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
