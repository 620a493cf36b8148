"""`cli.exit_now`: a process ends with its exit code, its output and its `atexit` functions, as with `sys.exit`, but
without the interpreter's teardown; a thread that is not a daemon is still waited for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)


@pytest.mark.slow
def test_the_code_the_output_and_the_atexit_functions_survive(tmp_path: Path):
    code = ("import atexit, sys, tempfile\n"
            "from cli_agent.cli.main import exit_now\n"
            "kept = tempfile.TemporaryDirectory(dir='.')\n"  # removed by its finalizer, which atexit runs
            "atexit.register(lambda: sys.stdout.write('bye'))\n"
            "sys.stdout.write(kept.name + ' ')\n"
            "sys.stderr.write('said')\n"
            "exit_now(3)\n"
            "sys.stdout.write('never')\n")
    result = _python(code, tmp_path)
    name, _, rest = result.stdout.partition(" ")
    assert (result.returncode, rest, result.stderr) == (3, "bye", "said")
    assert name and not (tmp_path / name).exists() and not list(tmp_path.iterdir())


@pytest.mark.slow
def test_a_running_thread_that_is_not_a_daemon_is_waited_for(tmp_path: Path):
    code = ("import sys, threading, time\n"
            "from cli_agent.cli.main import exit_now\n"
            "threading.Thread(target=lambda: (time.sleep(0.3), sys.stdout.write('late'))).start()\n"
            "exit_now(4)\n")
    result = _python(code, tmp_path)
    assert (result.returncode, result.stdout) == (4, "late")


@pytest.mark.slow
def test_a_profiler_still_gets_its_report(tmp_path: Path):
    (tmp_path / "ends.py").write_text("from cli_agent.cli.main import exit_now\nexit_now(7)\n")
    result = subprocess.run([sys.executable, "-m", "cProfile", "-o", "out.prof", "ends.py"], capture_output=True,
                            text=True, timeout=60, cwd=tmp_path)
    assert (tmp_path / "out.prof").is_file(), result  # cProfile writes it after the script ends (and exits 0)


@pytest.mark.slow
def test_a_closed_stdout_costs_no_traceback(tmp_path: Path):
    code = ("import os, sys\n"
            "from cli_agent.cli.main import exit_now\n"
            "sys.stdout.write('x' * 100)\n"
            "os.close(1)\n"
            "exit_now(5)\n")
    result = _python(code, tmp_path)
    assert (result.returncode, result.stderr) == (5, "")


@pytest.mark.slow
@pytest.mark.usefixtures("isolated_home")
def test_a_one_shot_process_ends_with_its_reply_and_code(tmp_path: Path):
    with FakeOpenAIServer(instant="Pong4711") as server:
        result = subprocess.run([sys.executable, "-m", "cli_agent", "-p", "hi", "--model", "openai/x", "--api-base",
                                 server.url, "--max-steps", "0"], capture_output=True, text=True, timeout=60,
                                cwd=tmp_path)
        assert result.returncode == 2 and result.stderr.startswith("cli-agent: ") and result.stdout == ""
        result = subprocess.run([sys.executable, "-m", "cli_agent", "-p", "hi", "--model", "openai/x", "--api-base",
                                 server.url, "-o", "json"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0 and '"Pong4711"' in result.stdout and result.stdout.endswith("}\n")
