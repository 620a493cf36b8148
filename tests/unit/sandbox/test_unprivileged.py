"""The sandbox as an ordinary user runs it: privileges dropped to nobody (uid 65534) for a whole Python process that
runs commands in the sandbox. CI machines run as root, so without this the unprivileged path would go untested."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from places import REPO

ROOT = REPO
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv")
                                or not sys.platform.startswith("linux"),
                                reason="needs root to drop privileges, and setpriv")

SCRIPT = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/tests")
from sandboxkit import sandboxed
ws, outside = Path(sys.argv[2]), Path(sys.argv[3])
write = sandboxed(ws, f"echo new > b.txt; echo more >> a.txt; echo x > {outside}/pwned; echo x > ../up; id -u")
bomb = sandboxed(ws, "python3 -c \\"import os, time\\nn = 0\\nwhile n < 2000:\\n  try:\\n    pid = os.fork()\\n"
                     "  except OSError:\\n    print('stopped after', n); break\\n  if pid == 0:\\n"
                     "    time.sleep(30); os._exit(0)\\n  n += 1\\"", timeout_s=60)
runaway = sandboxed(ws, "python3 -c \\"parts = []\\ntry:\\n  while len(parts) < 64:\\n"
                        "    parts.append(bytearray(16 << 20))\\n  print('never stopped')\\nexcept MemoryError:\\n"
                        "  print('stopped at', len(parts) * 16, 'MiB')\\"", max_memory_bytes=256 << 20)
print(json.dumps({"output": write.outcome.output, "changes": [c.path for c in write.changes.changes],
                  "bomb": bomb.outcome.output, "bomb_timed_out": bomb.outcome.timed_out,
                  "runaway": runaway.outcome.output}))
"""


@pytest.fixture
def open_tmp():
    """A temporary folder nobody can reach (pytest's own is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="cli-agent-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_an_unprivileged_user_gets_the_same_sandbox(open_tmp: Path) -> None:
    tmp_path = open_tmp
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    for folder in (ws, outside):
        folder.mkdir()
    (ws / "a.txt").write_text("a\n")
    for path in (ws, ws / "a.txt", outside):
        os.chown(path, 65534, 65534)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")} | {"HOME": str(tmp_path / "nohome")}
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", SCRIPT,
                           str(ROOT), str(ws), str(outside)], capture_output=True, text=True, timeout=180, env=env,
                          cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["changes"] == ["a.txt", "b.txt"]
    assert list(outside.iterdir()) == [] and not (tmp_path / "up").exists()
    assert (ws / "a.txt").read_text() == "a\n" and not (ws / "b.txt").exists()
    assert "stopped after" in result["bomb"] and not result["bomb_timed_out"]
    assert int(result["bomb"].split("stopped after")[1].split()[0]) < 512
    assert "stopped at" in result["runaway"] and "never stopped" not in result["runaway"], result["runaway"]


@pytest.mark.slow
def test_the_host_stays_out_for_an_unprivileged_user_too(open_tmp: Path) -> None:
    """The tests of unit/sandbox/test_host.py (locks, kernel interfaces, sockets, environment, secret files) and
    test_toolchains.py and test_toolchain_links.py (the user's venvs, HOME's tool folders, the links and credentials
    that come with them) run again as nobody, whose own files they then
    are (all but the run's deadline and verification's run, which start cli-agent itself, and the /etc one, which
    needs root to write under /etc)."""
    os.chown(open_tmp, 65534, 65534)
    home = open_tmp / "home"
    home.mkdir()
    os.chown(home, 65534, 65534)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "PYTEST_"))}
    env |= {"HOME": str(home), "HYPOTHESIS_STORAGE_DIRECTORY": str(open_tmp / "hyp")}
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m",
                           "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider",
                           f"--basetemp={open_tmp / 'pytest'}",
                           "-k", "not deadline and not verification",  # they start cli-agent: no one's file
                           str(ROOT / "tests" / "unit" / "sandbox" / "test_host.py"),
                           str(ROOT / "tests" / "unit" / "sandbox" / "test_toolchains.py"),
                           str(ROOT / "tests" / "unit" / "sandbox" / "test_toolchain_links.py")],
                          capture_output=True, text=True, timeout=600, env=env, cwd=str(open_tmp))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
