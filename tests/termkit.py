"""The real program in a pseudo-terminal (pexpect) with the scripted model, for the terminal tests: `Term` (the
REPL as a person's terminal shows it, answering cursor position requests) and `Repl` (the REPL with its toolbar off,
its home and workspace at hand)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

QUESTION = r"Apply\?"
CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|\r|\x08")
PROMPT = "> "
TIMEOUT = 60  # the machine may be busy: generous, a passing test never waits for it


class Term:
    """cli-agent in a pty with a scripted model; `out` is everything it printed so far."""

    def __init__(self, tmp_path: Path, replies: list[dict] | None, workspace: Path | None = None, *,
                 cols: int = 140, args: tuple[str, ...] = (), env: dict[str, str | None] | None = None,
                 wait: str | None = PROMPT) -> None:
        """`replies` None: no --model (the test says how the model is chosen); `wait`: what to expect first."""
        self.home = tmp_path / "home"
        self.ws = workspace or tmp_path / "ws"
        self.ws.mkdir(exist_ok=True)
        model: list[str] = []
        if replies is not None:
            script = tmp_path / "script.json"
            script.write_text(json.dumps(replies))
            model = ["--model", f"scripted:{script}"]
        full: dict[str, str | None] = {k: v for k, v in os.environ.items()
                                       if not k.startswith("CLI_AGENT_") and k != "CI"}
        full |= {"CLI_AGENT_HOME": str(self.home), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"} | (env or {})
        full = {k: v for k, v in full.items() if v is not None}  # env={"PROMPT_TOOLKIT_NO_CPR": None}: toolbar
        self.child = pexpect.spawn(sys.executable, ["-m", "cli_agent", *model, "-C", str(self.ws), *args],
                                   env=full, dimensions=(40, cols), encoding="utf-8", timeout=60)
        if wait is not None:
            self.expect_raw(wait)

    def say(self, text: str) -> None:
        self.child.send(text + "\r")

    def expect(self, pattern: str, timeout: float = 60) -> str:
        """Wait for the pattern; the text before it with the terminal's control sequences taken out."""
        return CONTROL.sub("", self.expect_raw(pattern, timeout))

    def expect_raw(self, pattern: str, timeout: float = 60) -> str:
        if "PROMPT_TOOLKIT_NO_CPR" in self.child.env:
            self.child.expect(pattern, timeout=timeout)
            return self.child.before
        before = ""  # the terminal answers prompt_toolkit's cursor position requests (it then draws the toolbar)
        while self.child.expect([pattern, r"\x1b\[6n"], timeout=timeout) == 1:
            before += self.child.before
            self.child.send("\x1b[1;1R")
        return before + self.child.before

    def quit(self) -> int:
        self.child.sendcontrol("d")
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus

    def traces(self) -> list[dict]:
        paths = sorted((self.home / "state" / "traces").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        return [json.loads(line) for line in paths[-1].read_text().splitlines()]



def create(path: str, content: str = "hi\n") -> dict:
    return {"name": "create_file", "arguments": {"path": path, "content": content}}



class Repl:
    """cli-agent's REPL in a pty with a scripted model; `home` is its CLI_AGENT_HOME, `ws` its workspace."""

    def __init__(self, tmp_path: Path, replies: list[dict], *args: str, name: str = "script", cols: int = 160) -> None:
        self.home, self.ws = tmp_path / "home", tmp_path / "ws"
        self.ws.mkdir(exist_ok=True)
        script = tmp_path / f"{name}.json"
        script.write_text(json.dumps(replies))
        self.child = pexpect.spawn(sys.executable, ["-m", "cli_agent", "--model", f"scripted:{script}", "-C",
                                                    str(self.ws), *args],
                                   env=repl_env(self.home), dimensions=(40, cols), encoding="utf-8", timeout=TIMEOUT)

    def say(self, text: str) -> None:
        self.child.send(text + "\r")

    def expect(self, pattern: str) -> str:
        """Wait for the pattern; the text before it without the terminal's control sequences."""
        self.child.expect(pattern)
        return CONTROL.sub("", self.child.before)

    def quit(self) -> int:
        self.child.sendcontrol("d")
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus

    def records(self) -> list[dict]:
        """Every record of every trace written under this home."""
        return [json.loads(line) for path in sorted((self.home / "state" / "traces").glob("*.jsonl"))
                for line in path.read_text().splitlines()]


def repl_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_") and k != "CI"}
    return env | {"CLI_AGENT_HOME": str(home), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
