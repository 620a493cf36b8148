"""Approval of commands as a table: running a sandboxed command is free unless commands = "ask"; an unsandboxed
one (sandbox = "off") is always asked for; a command's change set is weighed like any change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clikit import cli

from cli_agent.agent.approval import ApprovalMode, CallFacts, Policy, Verdict, assess

A, Q, D = Verdict.ALLOW, Verdict.ASK, Verdict.DENY


@pytest.mark.parametrize(("policy", "verdict"), [
    (Policy(), A),
    (Policy(interactive=False), A),
    (Policy(ask_commands=True), Q),
    (Policy(ask_commands=True, interactive=False), D),
    (Policy(ask_commands=True, yes=True), A),
    (Policy(ask_commands=True, mode=ApprovalMode.ALL), A),
    (Policy(ask_commands=True, granted_tools=frozenset({"run_command"})), A),
    (Policy(unsandboxed=True), Q),
    (Policy(unsandboxed=True, mode=ApprovalMode.ALL), Q),
    (Policy(unsandboxed=True, granted_tools=frozenset({"run_command"})), Q),
    (Policy(unsandboxed=True, interactive=False), D),
    (Policy(unsandboxed=True, yes=True), A),
])
def test_running_a_command(policy: Policy, verdict: Verdict) -> None:
    assert assess(CallFacts("run_command", True, "command"), policy).verdict is verdict


@pytest.mark.parametrize(("kind", "policy", "verdict"), [
    ("edit", Policy(), Q),
    ("edit", Policy(mode=ApprovalMode.EDITS), A),
    ("delete", Policy(mode=ApprovalMode.EDITS), Q),
    ("delete", Policy(interactive=False), D),
    ("create", Policy(yes=True), A),
])
def test_a_change_set_is_weighed_like_a_change(kind: str, policy: Policy, verdict: Verdict) -> None:
    assert assess(CallFacts("run_command", True, kind), policy).verdict is verdict  # type: ignore[arg-type]


def _run(tmp_path: Path, ws: Path, *extra: str, user_config: str = "") -> tuple[int, dict[str, object]]:
    home = tmp_path / "home"
    if user_config:
        (home / "config").mkdir(parents=True, exist_ok=True)
        (home / "config" / "config.toml").write_text(user_config)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command",
                                                   "arguments": {"command": "echo ran > marker.txt"}}]},
                                  {"text": "ok"}]))
    done = cli(["-p", "go", "--model", f"scripted:{script}", "-C", str(ws), "--output", "json", *extra], home=home)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow
def test_commands_ask_stops_headless_before_the_command_runs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    code, _ = _run(tmp_path, ws, user_config='commands = "ask"\n')
    assert code == 3 and not (ws / "marker.txt").exists()


@pytest.mark.slow
def test_sandbox_off_asks_every_time_and_runs_unconfined(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    code, _ = _run(tmp_path, ws, user_config='sandbox = "off"\n')
    assert code == 3 and not (ws / "marker.txt").exists()  # asked, no one to answer: it never ran
    code, report = _run(tmp_path, ws, "--yes", user_config='sandbox = "off"\n')
    assert code == 0 and (ws / "marker.txt").read_text() == "ran\n"  # written directly, not staged
    assert report["files_changed"] == []
