"""Prompt caching on a 10-request session against the loopback Anthropic Messages server (LiteLLM's `anthropic/`
route with --api-base): the real CLI (`cli-agent -p ... -o json`) with its real system prompt and tool schemas, nine
read_file calls and an answer. Printed: where each request body carries its cache breakpoints, the usage the server
reported (input, cache read, cache write) and what LiteLLM prices the run at with caching on and with `cache = false`;
the last request body's outline (each block, its size, ⚑ where a breakpoint is); `--bodies DIR` writes every request
body as the server received it (DIR/cached-N.json, DIR/uncached-N.json).

    PYTHONPATH=. LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/prompt_cache.py [--model M] [--bodies DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from cli_agent.cli.main import run
from cli_agent.providers.loopback.fake_anthropic import FakeAnthropicServer

STEPS = 10


def script() -> list[dict[str, Any]]:
    reads = [{"tool_calls": [{"name": "read_file", "arguments": {"path": f"mod{n}.py"}}]} for n in range(STEPS - 1)]
    return [*reads, {"text": "Read all nine modules: each defines one function and its constant."}]


def marks(body: dict[str, Any]) -> str:
    """Where a body carries cache_control: system, tools, or mN:role for message N."""
    found = ["tools" for tool in body.get("tools") or () if tool.get("cache_control")]
    found += ["system" for block in body.get("system") or () if isinstance(block, dict) and block.get("cache_control")]
    for n, message in enumerate(body["messages"]):
        content = message["content"] if isinstance(message["content"], list) else []
        found += [f"m{n}:{block['type']}" for block in content if block.get("cache_control")]
    return ", ".join(found) or "-"


def outline(body: dict[str, Any]) -> list[str]:
    """The body's blocks in Anthropic's order, each with its size and ⚑ where it carries cache_control."""
    def flag(block: Any) -> str:
        return " ⚑" if isinstance(block, dict) and block.get("cache_control") else ""

    tools = body.get("tools") or []
    lines = [f"tools: {len(tools)} definitions, {len(json.dumps(tools)):,} chars{flag(tools[-1]) if tools else ''}"]
    lines += [f"system: text, {len(b.get('text', '')):,} chars{flag(b)}" for b in body.get("system") or ()]
    for n, message in enumerate(body["messages"]):
        content = message["content"] if isinstance(message["content"], list) else [{"type": "text",
                                                                                   "text": message["content"]}]
        for block in content:
            lines.append(f"m{n} {message['role']}: {block['type']}, {len(json.dumps(block)):,} chars{flag(block)}")
    return lines


def session(model: str, cache: bool, root: Path) -> tuple[dict[str, Any], FakeAnthropicServer]:
    workspace = root / ("cached" if cache else "uncached")
    workspace.mkdir()
    for n in range(STEPS - 1):
        (workspace / f"mod{n}.py").write_text(f"LIMIT_{n} = {n * 10}\n\n\ndef check_{n}(value):\n"
                                              f"    return value < LIMIT_{n}\n" * 3)
    os.environ["CLI_AGENT_CACHE"] = "true" if cache else "false"
    out = io.StringIO()
    with FakeAnthropicServer(script()) as server, contextlib.redirect_stdout(out):
        code = run(["-p", "read every module and say what they hold", "-m", model, "--api-base", server.url,
                    "--api-key", "k", "-C", str(workspace), "-y", "-o", "json", "--max-steps", str(STEPS),
                    "--trace", str(root / f"trace-{cache}.jsonl")])
    if code != 0:
        raise SystemExit(f"the run failed ({code}): {out.getvalue()[-500:]}")
    return json.loads(out.getvalue()), server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="anthropic/claude-sonnet-4-5")
    parser.add_argument("--bodies", type=Path, help="write every request body here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("XDG_STATE_HOME", str(Path(tmp) / "state"))
        os.environ.setdefault("XDG_CONFIG_HOME", str(Path(tmp) / "config"))
        cached, server = session(args.model, True, Path(tmp))
        uncached, plain = session(args.model, False, Path(tmp))
    if args.bodies:
        args.bodies.mkdir(parents=True, exist_ok=True)
        for name, bodies in (("cached", server.requests), ("uncached", plain.requests)):
            for n, body in enumerate(bodies, 1):
                (args.bodies / f"{name}-{n}.json").write_text(json.dumps(body, indent=1, ensure_ascii=False))
    print(f"{args.model}, {STEPS} requests in one run (cli-agent -p, real system prompt and tools)\n")
    print(f"{'req':>3}  {'input':>6}  {'cache read':>10}  {'cache write':>11}  breakpoints (cache on)")
    for n, (body, usage) in enumerate(zip(server.requests, server.usages, strict=True), 1):
        print(f"{n:>3}  {usage['input_tokens']:>6}  {usage['cache_read_input_tokens']:>10}  "
              f"{usage['cache_creation_input_tokens']:>11}  {marks(body)}")
    print(f"\nrequest {len(server.requests)}'s body, block by block (⚑: cache_control):")
    for line in outline(server.requests[-1]):
        print("  " + line)
    print(f"\nwith cache = false: breakpoints in {sum(marks(b) != '-' for b in plain.requests)} of "
          f"{len(plain.requests)} request bodies")
    for name, report in (("cache on", cached), ("cache = false", uncached)):
        u = report["usage"]
        print(f"{name:>14}: prompt {u['prompt_tokens']:,} tokens ({u['cached_tokens']:,} read from the cache, "
              f"{u['cache_write_tokens']:,} written), completion {u['completion_tokens']:,}; "
              f"cost ${u['cost_usd']:.4f} (LiteLLM's prices)")
    saved = 1 - cached["usage"]["cost_usd"] / uncached["usage"]["cost_usd"]
    print(f"\ncaching saves {saved:.0%} of the session's cost")
    return 0


if __name__ == "__main__":
    sys.exit(main())
