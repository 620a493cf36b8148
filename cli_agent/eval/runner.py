"""The offline suite: each scenario in its own temporary workspace, through a real session with the scripted
provider, no one to ask (a change needs `yes = true`), then the checks of its `[expect]` table."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import field
from pathlib import Path
from typing import Any

from cli_agent.config import Settings
from cli_agent.contracts import Event, RunFinished, ToolResult, dataclass
from cli_agent.eval.scenarios import Scenario
from cli_agent.facts import FactStore
from cli_agent.providers import ScriptedProvider
from cli_agent.session import drive, open_session
from cli_agent.validated import check

OUTSIDE_FILES = {"secret.txt": "outside the workspace: never touched\n"}


@dataclass
class ScenarioResult:
    name: str
    covers: str
    passed: bool = False
    failures: list[str] = field(default_factory=list)
    exit_code: int | None = None
    stop_reason: str = ""
    requests: int = 0
    results: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "covers": self.covers, "passed": self.passed, "failures": self.failures,
                "exit_code": self.exit_code, "stop_reason": self.stop_reason, "requests": self.requests,
                "results": self.results, "seconds": round(self.seconds, 3)}


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every file (bytes) and link (its target) below `folder`, by relative path."""
    out: dict[str, bytes | str] = {}
    for base, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(base, name)
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_bytes()
    return out


def prepare_workspace(base: Path, files: dict[str, str], symlinks: dict[str, str] | None = None) -> Path:
    """`base/workspace` with `files`, and `base/outside` with OUTSIDE_FILES; links get `{outside}` expanded."""
    ws, outside = base / "workspace", base / "outside"
    for root, content in ((ws, files), (outside, OUTSIDE_FILES)):
        root.mkdir(parents=True, exist_ok=True)
        for rel, text in content.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    for rel, target in (symlinks or {}).items():
        os.symlink(_expand(target, ws, outside), ws / rel)
    return ws


def _expand(value: Any, ws: Path, outside: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{outside}", str(outside)).replace("{workspace}", str(ws))
    if isinstance(value, list):
        return [_expand(v, ws, outside) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, ws, outside) for k, v in value.items()}
    return value


def run_scenario(scenario: Scenario, base: Path | None = None) -> ScenarioResult:
    """Run one scenario in `base` (workspace/, outside/, trace.jsonl), by default a temporary folder."""
    result = ScenarioResult(scenario.name, scenario.covers)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cli-agent-eval-") as tmp:
        try:
            _run(scenario, base or Path(tmp), result)
        except Exception as exc:  # a scenario that can't even run is a failed scenario, not a crashed suite
            result.failures.append(f"could not run: {type(exc).__name__}: {exc}")
    result.seconds = time.monotonic() - started
    result.passed = not result.failures
    return result


def _run(scenario: Scenario, base: Path, result: ScenarioResult) -> None:
    ws = prepare_workspace(base, scenario.files, scenario.symlinks)
    outside_before = snapshot(base / "outside")
    provider = ScriptedProvider(_expand(scenario.replies, ws, base / "outside"),
                                native_tools=scenario.protocol == "native")
    settings = check(Settings, {
        "model": "scripted:eval", "workspace": str(ws), "protocol": scenario.protocol, "yes": scenario.yes,
        "max_steps": scenario.max_steps, "timeout": scenario.timeout, "locks": scenario.locks,
        "trace": str(base / "trace.jsonl"), "retry_base_delay": 0.0})
    session = open_session(settings, interactive=False, provider_factory=lambda s: provider, record=False)
    events: list[Event] = []
    try:
        finished = drive(session.run(scenario.prompt, None), session.trace, events.append)
    finally:
        session.close()
    result.exit_code, result.stop_reason = finished.exit_code, finished.stop_reason.value
    result.requests = len(provider.requests)
    result.results = [f"{e.tool}:{'ok' if e.envelope.ok else 'error'}" for e in events if isinstance(e, ToolResult)]
    result.failures += _check(scenario.expect.given(), result, finished, provider, ws)
    if snapshot(base / "outside") != outside_before:
        result.failures.append("something outside the workspace changed")


def _check(expect: dict[str, Any], result: ScenarioResult, finished: RunFinished, provider: Any,
           ws: Path) -> list[str]:
    failures = []
    got: dict[str, Any] = {"exit_code": result.exit_code, "stop_reason": result.stop_reason,
                           "requests": result.requests, "replies_left": provider.remaining, "results": result.results}
    expect = {"replies_left": 0} | expect
    for key in ("exit_code", "stop_reason", "requests", "replies_left", "results"):
        if key in expect and expect[key] != got[key]:
            failures.append(f"{key}: expected {expect[key]!r}, got {got[key]!r} ({finished.message})")
    for rel, content in expect.get("files", {}).items():
        path = ws / rel
        actual = path.read_text(encoding="utf-8") if path.is_file() else None
        if actual != content:
            failures.append(f"file {rel}: expected {content!r}, got {actual!r}")
    failures += [f"file {rel} should not exist" for rel in expect.get("absent", []) if os.path.lexists(ws / rel)]
    for told in expect.get("told", []):
        text = _told(provider, int(told["request"]))
        if told["contains"] not in text:
            failures.append(f"request {told['request']}: the model was not told {told['contains']!r} "
                            f"(it was told {text[:200]!r})")
    if "answer_contains" in expect and expect["answer_contains"] not in finished.answer:
        failures.append(f"answer: expected it to contain {expect['answer_contains']!r}, got {finished.answer!r}")
    if "pending_facts" in expect or "committed_facts" in expect:
        store = FactStore(ws)
        for key, count in (("pending_facts", len(store.pending())), ("committed_facts", len(store.committed()))):
            if key in expect and expect[key] != count:
                failures.append(f"{key}: expected {expect[key]}, got {count}")
    return failures


def _told(provider: Any, request: int) -> str:
    """What request `request` (1-based) carried after the model's last reply: tool results, error notes."""
    if request > len(provider.requests):
        return ""
    messages = provider.requests[request - 1].messages
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    return "\n".join(m.content or "" for m in messages[last + 1:])
