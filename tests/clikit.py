"""cli-agent as a child process, as a user's shell starts it: its own home, CI set, no CLI_AGENT_* of the caller."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def cli(args: list[str], *, home: Path, timeout: float = 120, env_extra: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(home), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"} | (env_extra or {})
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def user_config(home: Path, text: str) -> None:
    """Write the user config of the cli-agent home `home`."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text(text)


def calc_project(tmp_path: Path, config: str) -> tuple[Path, Path]:
    """A workspace whose `add` subtracts, with the pytest test that catches it, and a home whose user config is
    `config`: (workspace, home)."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "tests").mkdir(parents=True)
    (ws / "conftest.py").write_text("")
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    user_config(home, config)
    return ws, home


@contextlib.contextmanager
def reaped(proc: subprocess.Popen[Any]) -> Iterator[subprocess.Popen[Any]]:
    """`proc`, killed and waited for on the way out if it still runs: a test that fails midway (a signal sent
    too late, an answer that never came) leaves no cli-agent behind."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
