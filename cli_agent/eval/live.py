"""The live comparison: each model does each task of `live.toml` in its own temporary workspace (changes approved,
no one asked), and the resulting files are checked. Per model: tasks passed, valid tool-call rate (calls naming a
known tool with arguments its schema accepts), malformed replies, steps, tokens, cost and wall time.

Keys come from the environment as the provider expects them; a model whose key is missing is reported once, with
the variable to set, and its remaining tasks are skipped.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from dataclasses import field
from pathlib import Path
from typing import Any

from cli_agent.config import Settings
from cli_agent.contracts import Event, RunFinished, StopReason, ToolCallsProposed, Warning, dataclass, errors
from cli_agent.eval.runner import prepare_workspace, snapshot
from cli_agent.eval.scenarios import LiveTask
from cli_agent.session import drive, open_session


@dataclass
class TaskResult:
    name: str
    passed: bool = False
    why: str = ""
    stop_reason: str = ""
    tool_calls: int = 0
    valid_calls: int = 0
    malformed: int = 0
    steps: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in self.__dict__.items()}


@dataclass
class ModelResult:
    model: str
    tasks: list[TaskResult] = field(default_factory=list)
    missing_credentials: bool = False
    note: str = ""

    def _sum(self, key: str) -> Any:
        return sum(getattr(t, key) for t in self.tasks)

    passed = property(lambda self: sum(t.passed for t in self.tasks))
    tool_calls = property(lambda self: self._sum("tool_calls"))
    valid_calls = property(lambda self: self._sum("valid_calls"))
    malformed = property(lambda self: self._sum("malformed"))
    steps = property(lambda self: self._sum("steps"))
    tokens = property(lambda self: self._sum("tokens"))
    cost_usd = property(lambda self: self._sum("cost_usd"))
    seconds = property(lambda self: self._sum("seconds"))

    def to_dict(self) -> dict[str, Any]:
        rate = self.valid_calls / self.tool_calls if self.tool_calls else None
        return {"model": self.model, "missing_credentials": self.missing_credentials, "note": self.note,
                "tasks_passed": self.passed, "tasks": len(self.tasks), "tool_calls": self.tool_calls,
                "valid_tool_call_rate": rate, "malformed_replies": self.malformed, "steps": self.steps,
                "tokens": self.tokens, "cost_usd": round(self.cost_usd, 6), "seconds": round(self.seconds, 3),
                "results": [t.to_dict() for t in self.tasks]}


def run_model(model: str, tasks: list[LiveTask], *, api_base: str | None = None, max_steps: int = 15,
              timeout: float = 180.0) -> ModelResult:
    result = ModelResult(model)
    for task in tasks:
        try:
            outcome = _run_task(model, task, api_base, max_steps, timeout)
        except errors.MissingCredentialsError as exc:
            result.missing_credentials, result.note = True, str(exc)
            break
        except errors.CliAgentError as exc:
            outcome = TaskResult(task.name, why=str(exc))
        if outcome.stop_reason == StopReason.USAGE.value and not result.tasks:
            result.missing_credentials, result.note = True, outcome.why  # e.g. the key is checked at the request
            break
        result.tasks.append(outcome)
    return result


def _run_task(model: str, task: LiveTask, api_base: str | None, max_steps: int, timeout: float) -> TaskResult:
    outcome = TaskResult(task.name)
    with tempfile.TemporaryDirectory(prefix="cli-agent-live-") as tmp:
        ws = prepare_workspace(Path(tmp), task.files)
        before = snapshot(ws)
        settings = Settings(model=model, api_base=api_base, workspace=str(ws), yes=True, max_steps=max_steps,
                            timeout=timeout, trace=str(Path(tmp) / "trace.jsonl"))
        started = time.monotonic()
        session = open_session(settings, interactive=False, record=False)
        events: list[Event] = []
        try:
            finished = drive(session.run(task.prompt, None), session.trace, events.append)
            names = set(session.registry.names())
            outcome.seconds = time.monotonic() - started
        finally:
            session.close()
        _measure(outcome, events, finished, names, session.registry)
        if finished.stop_reason is not StopReason.DONE:
            outcome.why = f"the run ended with {finished.stop_reason.value}: {finished.message}"
        else:
            outcome.why = check_task(task, ws, before, finished.answer) or ""
        outcome.passed = not outcome.why
    return outcome


def _measure(outcome: TaskResult, events: list[Event], finished: RunFinished, names: set[str],
             registry: Any) -> None:
    import jsonschema  # deferred: jsonschema (40 ms), only for what the fast checks leave

    outcome.stop_reason = finished.stop_reason.value
    outcome.steps, outcome.tokens = finished.steps, finished.usage.total_tokens
    outcome.cost_usd = finished.usage.cost_usd
    for event in events:
        if isinstance(event, Warning) and event.code == "malformed_reply":
            outcome.malformed += 1
        elif isinstance(event, ToolCallsProposed):
            for call in event.calls:
                outcome.tool_calls += 1
                if call.arguments is not None and call.name in names:
                    schema = registry.get(call.name).parameters
                    outcome.valid_calls += jsonschema.Draft202012Validator(schema).is_valid(call.arguments)


def check_task(task: LiveTask, ws: Path, before: dict[str, bytes | str], answer: str) -> str | None:
    """None if the task's checks pass, else one line saying what is wrong."""
    check = task.check.given()
    if "run" in check:
        script = [str(part) for part in (check["run"] if isinstance(check["run"], list) else [check["run"]])]
        done = _python(ws, script)
        if done.returncode != 0:
            return f"{' '.join(script)} exited {done.returncode}: {done.stderr.strip()[-200:]}"
        if "stdout" in check and done.stdout.strip() != str(check["stdout"]).strip():
            return f"{' '.join(script)} printed {done.stdout.strip()[:100]!r}, not {check['stdout']!r}"
    if "python" in check:
        done = _python(ws, ["-c", str(check["python"])])
        if done.returncode != 0:
            return f"the check failed: {done.stderr.strip()[-200:]}"
    if "answer_contains" in check and str(check["answer_contains"]) not in answer:
        return f"the answer does not contain {check['answer_contains']!r}: {answer[:100]!r}"
    if check.get("unchanged") and snapshot(ws) != before:
        return "the workspace changed, but the task only asked a question"
    return None


def _python(ws: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([sys.executable, *args], cwd=ws, capture_output=True, text=True, timeout=20,
                              env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"})
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 124, "", "timed out after 20 s")
