"""`[sandbox] write_paths`: a venv outside the workspace that the user listed is changed in place by a command
(`pip install` of a local wheel, no network); not listed, the install is refused and the result names the setting.
The session says once which folders commands may change in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sandboxkit import make_venv

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


def wheel(folder: Path) -> Path:
    """A real, minimal wheel of one module (`tinypkg`), built by hand: no build backend, no network."""
    path = folder / "tinypkg-1.0-py3-none-any.whl"
    files = {"tinypkg/__init__.py": "ANSWER = 42\n",
             "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
             "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
                                            "Tag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + "tinypkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in {**files, "tinypkg-1.0.dist-info/RECORD": record}.items():
            zf.writestr(name, text)
    return path


def install(tmp_path: Path, config: str) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    ws, venv = tmp_path / "ws", tmp_path / "venv"
    (ws / "dist").mkdir(parents=True)
    site = make_venv(venv, pth=(sysconfig.get_paths()["purelib"],))  # pip from this interpreter's packages
    whl = wheel(ws / "dist")
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(config.replace("VENV", str(venv)))
    command = f"{venv}/bin/python -m pip install --no-index --no-deps --disable-pip-version-check dist/{whl.name}"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
                                  {"text": "done"}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(home), "CI": "true", "PATH": f"{venv}/bin:{env.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "cli_agent", "-p", "go", "--model", f"scripted:{script}", "-C",
                           str(ws), "--yes", "--output", "json"], env=env, capture_output=True, text=True,
                          timeout=180)
    out = json.loads(done.stdout)
    records = [json.loads(line) for path in home.rglob("*.jsonl") for line in path.read_text().splitlines()]
    result = next(r["envelope"] for r in records if r.get("type") == "tool_result")
    return site, out, result


def test_pip_installs_into_a_venv_the_user_listed(tmp_path: Path) -> None:
    site, out, result = install(tmp_path, '[sandbox]\nwrite_paths = ["VENV"]\n')
    assert result["data"]["exit_code"] == 0, result["data"]["output"]
    assert (site / "tinypkg" / "__init__.py").read_text() == "ANSWER = 42\n"  # in place, not staged
    assert out["files_changed"] == []
    assert any("in place" in note and str(tmp_path / "venv") in note for note in out["notes"]), out["notes"]


def test_pip_into_a_venv_not_listed_is_refused_naming_the_setting(tmp_path: Path) -> None:
    site, _out, result = install(tmp_path, "")
    assert result["data"]["exit_code"] != 0
    assert "Read-only file system" in result["data"]["output"]
    assert "[sandbox] write_paths" in result["data"]["read_only"]
    assert str(tmp_path / "venv") in result["data"]["read_only"]
    assert not (site / "tinypkg").exists()
