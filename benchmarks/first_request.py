"""A new process's first request on a project the model never saw: prompt tokens from the cache and time to the
first token, with what every project shares first (`local.reply.shared_first`) against the layout before it (the
project's listing, instructions and test command inside the system prompt), alternated in one run.

    .venv/bin/python benchmarks/first_request.py                  # Qwen2.5-Coder-1.5B, 3 rounds
    .venv/bin/python benchmarks/first_request.py --rounds 2 --json

Each round and layout, as two processes would: a server child (`LlamaServer`) answers the first request of project
A (built by cli-agent's own planner for `--model local`), its slot is saved as a closing session saves it, and the
server stops; a new server restores that slot, as the provider does, only when the plan fingerprints of the two
requests match (`plan_key`: the system prompt and the schema), and gets the first request of project B, which it
never saw. Measured
on B's request: `timings.cache_n` / (`cache_n` + `prompt_n`) (llama.cpp's own counts) and the seconds from sending it
to the first streamed token. The layouts alternate which goes first each round; medians are reported with the
one-minute load beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from cli_agent.config.settings import LocalSettings, Settings
from cli_agent.contracts.messages import Message
from cli_agent.fs.workspace import Workspace
from cli_agent.prompt.plan import Planner
from cli_agent.providers.base import ProviderRequest
from cli_agent.providers.local.model import ensure_model, resolve_model
from cli_agent.providers.local.provider import CONSTRAINED_ANSWER
from cli_agent.providers.local.reply import plan_key, shared_first, wire_options
from cli_agent.providers.local.server import LlamaServer, default_threads
from cli_agent.providers.local.warm_cache import WarmCache
from cli_agent.providers.openai_http import OpenAIHTTPProvider
from cli_agent.tools.registry import Registry

PROJECTS = {
    "a": {"app.py": "def main():\n    print('hi')\n", "README.md": "# app\n", "tests/test_app.py": "import app\n"},
    "b": {"pyproject.toml": "[project]\nname = 'tally'\n", "src/tally/__init__.py": "", "src/tally/core.py":
          "def count(xs):\n    return len(xs) - 1\n", "tests/test_core.py": "from tally.core import count\n",
          "noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n    session.run('pytest')\n"},
}
TASK = "count([1, 2, 3]) returns 2 but it should be 3. Fix count."


def body(root: Path, model: str, shared: bool) -> tuple[dict[str, Any], str]:
    settings = Settings(model="local", workspace=str(root), local=LocalSettings(model=model))
    plan = Planner(settings, Registry.builtin(), Workspace(root), "json")(TASK, None)
    messages: tuple[Message, ...] = (Message("system", plan.system or ""), Message("user", TASK))
    if shared:
        messages = shared_first(messages, CONSTRAINED_ANSWER)
    request = ProviderRequest(messages, options=wire_options(plan.request_options) | {"max_tokens": 8})
    return OpenAIHTTPProvider("openai/local", api_base="http://127.0.0.1:1/v1").request_body(request), \
        plan_key(request)


def first_token(server: LlamaServer, payload: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    started, first = time.monotonic(), None
    timings: dict[str, Any] = {}
    with httpx.Client(timeout=900, trust_env=False) as client, \
            client.stream("POST", f"{server.api_base}/chat/completions", json=payload) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if first is None and any((c.get("delta") or {}).get("content") for c in chunk.get("choices", [])):
                first = time.monotonic() - started
            timings = chunk.get("timings") or timings
    return (first or time.monotonic() - started), timings


def one(path: Path, folder: Path, payloads: tuple[dict[str, Any], dict[str, Any]], restore: bool
        ) -> tuple[float, float]:
    cache = WarmCache(folder, "benchmark", "benchmark")
    server = LlamaServer(path, threads=default_threads(), context_size=8192, cache=cache)
    server.start()
    try:
        server.wait_ready(300)
        first_token(server, payloads[0])
        assert server.slot("save", "state.slot"), "the slot was not saved"
    finally:
        server.stop()
    server = LlamaServer(path, threads=default_threads(), context_size=8192, cache=cache)
    server.start()
    try:
        server.wait_ready(300)
        assert not restore or server.slot("restore", "state.slot"), "the slot was not restored"
        seconds, timings = first_token(server, payloads[1])
    finally:
        server.stop()
    cached, evaluated = int(timings.get("cache_n", 0)), int(timings.get("prompt_n", 0))
    return cached / max(1, cached + evaluated), seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    path = ensure_model(resolve_model(args.model), quiet=True)
    with tempfile.TemporaryDirectory(prefix="first-request-") as tmp:
        roots = {}
        for name, files in PROJECTS.items():
            roots[name] = Path(tmp, name)
            for rel, text in files.items():
                Path(roots[name], rel).parent.mkdir(parents=True, exist_ok=True)
                Path(roots[name], rel).write_text(text)
        layouts = {"shared first": True, "listing in the system prompt": False}
        built = {label: (body(roots["a"], args.model, shared), body(roots["b"], args.model, shared))
                 for label, shared in layouts.items()}
        payloads = {label: (a[0], b[0]) for label, (a, b) in built.items()}
        restores = {label: a[1] == b[1] for label, (a, b) in built.items()}  # the warm start's key matches
        figures: dict[str, list[tuple[float, float]]] = {label: [] for label in layouts}
        loads = []
        for round_ in range(args.rounds):
            order = list(layouts) if round_ % 2 == 0 else list(layouts)[::-1]
            for label in order:
                folder = Path(tmp, f"kv-{round_}-{len(figures[label])}-{label[:6]}")
                folder.mkdir()
                figures[label].append(one(path, folder, payloads[label], restores[label]))
                loads.append(os.getloadavg()[0])
                share, seconds = figures[label][-1]
                print(f"round {round_ + 1} {label}: {share:.0%} from the cache, first token {seconds:.1f} s",
                      file=sys.stderr, flush=True)
    result = {label: {"restored": restores[label], "cached_share_median": round(statistics.median(s for s, _ in f), 3),
                      "first_token_s_median": round(statistics.median(t for _, t in f), 2)}
              for label, f in figures.items()}
    summary = {"model": args.model, "rounds": args.rounds, "layouts": result,
               "load": [round(min(loads), 1), round(max(loads), 1)], "time": time.strftime("%Y-%m-%d")}
    print(json.dumps(summary) if args.json else json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
