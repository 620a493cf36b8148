"""Change sets at the edges, through the real CLI and sandbox: every path is carried safely end to end (trace, JSON
output, journal), one path that can't be applied is refused alone with its reason while the rest applies, and what
was applied is exactly what is reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


def run(tmp_path: Path, ws: Path, command: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
                                  {"text": "done"}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true"}
    done = subprocess.run([sys.executable, "-m", "cli_agent", "-p", "go", "--model", f"scripted:{script}", "-C",
                           str(ws), "--yes", "--output", "json"], env=env, capture_output=True, text=True,
                          timeout=120)
    return done, json.loads(done.stdout) if done.stdout.strip() else {}


def traces(tmp_path: Path) -> list[dict]:
    records = []
    for path in (tmp_path / "home").rglob("*.jsonl"):
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return records



def test_a_non_utf8_name_is_refused_alone_and_the_rest_applies(tmp_path: Path, ws: Path) -> None:
    done, out = run(tmp_path, ws, "printf a > \"$(printf 'bad\\377name')\"; printf 'b\\033[31m' > "
                                  "\"$(printf 'esc\\033name')\"; echo ok > good.txt")
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    assert out["files_changed"] == ["good.txt"] and (ws / "good.txt").read_text() == "ok\n"
    assert sorted(os.listdir(ws)) == ["good.txt"]  # nothing applied that was not reported
    records = traces(tmp_path)  # the trace and the journal were written whole, in UTF-8
    assert records and any("bad\\\\xffname" in json.dumps(r) or "bad\\xffname" in json.dumps(r) for r in records)


def test_a_path_too_long_to_stage_is_refused_alone(tmp_path: Path) -> None:
    import shutil
    import tempfile

    ws = Path(tempfile.mkdtemp(prefix="w", dir="/tmp"))  # a short workspace path, shorter than the staging folder's
    try:
        deep = "/".join(["d" * 250] * 16)
        name = "f" * (4070 - len(deep) - 1)  # the whole path fits under the workspace, not under the staging folder
        assert len(str(ws)) + 1 + len(deep) + 1 + len(name) < 4095
        done, out = run(tmp_path, ws, f"mkdir -p {deep} && echo deep > {deep}/{name} && echo made; echo ok > good.txt")
        assert "made" in json.dumps(traces(tmp_path))
        assert done.returncode == 0, done.stderr
        assert out["files_changed"] == ["good.txt"] and (ws / "good.txt").exists()
        assert sorted(os.listdir(ws)) == ["good.txt"]
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    text = json.dumps([r for r in traces(tmp_path) if r.get("type") == "tool_result"])
    assert "too long" in text


def test_folders_made_files_and_files_made_folders_apply_whole(tmp_path: Path, ws: Path) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "inner.txt").write_text("x\n")
    (ws / "f").write_text("y\n")
    done, out = run(tmp_path, ws, "rm -rf d && echo file > d; rm f && mkdir f && echo in > f/x.txt")
    assert done.returncode == 0, done.stderr
    assert sorted(out["files_changed"]) == ["d", "d/inner.txt", "f", "f/x.txt"]
    assert out["tool_calls"][0]["ok"] is True
    assert (ws / "d").read_text() == "file\n" and (ws / "f" / "x.txt").read_text() == "in\n"
