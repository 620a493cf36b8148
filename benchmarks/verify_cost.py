"""What verification costs: the same one-shot fix of a two-test pytest project, with `verify` on and off, alternated.

The scripted model reads `calc.py`, fixes it and says it is done; with verification the harness then runs the
nearest test file and the whole test command in the command sandbox. Each run gets a fresh copy of the project.
The row is the median extra wall time of a verified run; the target says it stays a couple of pytest starts.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, Sample, bench_env, cli_command, emit, measure, median

TARGET_EXTRA_S = 4.0  # two pytest starts in the sandbox, with room for a busy machine
RUNS = 7
SCRIPT = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
          {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
          {"text": "Fixed."}]


def _project(into: Path) -> None:
    (into / "tests").mkdir(parents=True)
    (into / "conftest.py").write_text("")
    (into / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (into / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")


def _run(tmp: Path, verify: bool) -> Sample:
    ws = tmp / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(tmp / "base", ws)
    argv = [*cli_command(), "-p", "fix add", "--model", f"scripted:{tmp / 'script.json'}", "-C", str(ws), "--yes",
            "--output", "json"]
    sample = measure(argv, env=bench_env(tmp / "home", CLI_AGENT_VERIFY=str(verify).lower()), cwd=tmp)
    report = json.loads(sample.out)
    if sample.code != 0 or report["verified"] is not (True if verify else None):
        what = "verified" if verify else "plain"
        raise SystemExit(f"the {what} run failed (exit {sample.code}): {sample.out[-300:]}")
    return sample


def measure_rows(runs: int = RUNS) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="cli-agent-verify-bench-") as name:
        tmp = Path(name)
        _project(tmp / "base")
        (tmp / "script.json").write_text(json.dumps(SCRIPT))
        (tmp / "home" / "config").mkdir(parents=True)
        (tmp / "home" / "config" / "config.toml").write_text(
            f"test_command = {json.dumps(f'{sys.executable} -m pytest -q -p no:cacheprovider')}\n")
        _run(tmp, True), _run(tmp, False)  # warm-up: bytecode caches
        pairs = [(_run(tmp, True), _run(tmp, False)) for _ in range(runs)]
    on, off = median([a.wall for a, _ in pairs]), median([b.wall for _, b in pairs])
    extra = median([a.wall - b.wall for a, b in pairs])
    return [Row("verify_cost", "a verified one-shot fix, over the same run unverified", f"+{extra:.2f} s wall",
                f"≤ +{TARGET_EXTRA_S:.1f} s", extra / TARGET_EXTRA_S,
                f"median of {runs} alternated pairs: {on:.2f} s verified, {off:.2f} s not; two pytest runs in the "
                f"command sandbox")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))
