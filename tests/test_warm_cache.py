"""Warm start: the server's disk cache of evaluated prompts, keyed per model and runtime, and its faults (each a
one-line error naming the fix, exit 2, before any model loads)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from cli_agent.errors import UsageError
from cli_agent.local_model import CATALOG, model_path
from cli_agent.providers.local import LlamaServer
from cli_agent.warm_cache import CACHE_BYTES, WarmCache

pytestmark = pytest.mark.usefixtures("isolated_home")
SHA = "ab" * 32


def test_the_folder_is_keyed_by_model_and_runtime_and_recorded(isolated_home):
    cache = WarmCache.for_model(SHA, "0.3.36")
    cache.check()
    assert cache.folder.name == f"{SHA[:16]}-0.3.36" and cache.folder.is_relative_to(isolated_home)
    assert json.loads((cache.folder / "KEY").read_text()) == {"model_sha256": SHA, "runtime": "0.3.36"}
    cache.check()  # again: the same key is fine
    assert WarmCache.for_model(SHA, "0.3.37").folder != cache.folder


def test_another_model_or_runtime_is_refused_with_the_fix():
    cache = WarmCache.for_model(SHA, "0.3.36")
    cache.check()
    (cache.folder / "KEY").write_text(json.dumps({"model_sha256": "cd" * 32, "runtime": "0.2.0"}))
    with pytest.raises(UsageError, match=r"another model or runtime.*remove it with: rm -r ") as info:
        cache.check()
    assert info.value.exit_code == 2 and "\n" not in str(info.value)


@pytest.mark.parametrize("damage", [b"", b"SQLite format 3\x00" + b"\xff" * 200, b"garbage" * 100])
def test_a_damaged_index_is_refused_with_the_fix(damage):
    cache = WarmCache.for_model(SHA, "0.3.36")
    cache.check()
    index = cache.folder / ".cache/llama_cache/cache.db"
    index.parent.mkdir(parents=True)
    with sqlite3.connect(index) as db:
        db.execute("create table t (x)")
        db.executemany("insert into t values (?)", [(i,) for i in range(2000)])
    data = index.read_bytes()
    index.write_bytes(data[:len(data) // 3] + damage if damage else data[:4096])
    with pytest.raises(UsageError, match=r"damaged.*remove it with: rm -r "):
        cache.check()


def test_a_key_that_is_not_json_is_refused():
    cache = WarmCache.for_model(SHA, "0.3.36")
    cache.check()
    (cache.folder / "KEY").write_text("{half")
    with pytest.raises(UsageError, match=r"can't be used.*rm -r .*warm_start = false"):
        cache.check()


@pytest.mark.parametrize(("log", "expected"), [
    ("OSError: [Errno 28] No space left on device", "disk is full.*free some space"),
    ("sqlite3.OperationalError: database or disk is full", "disk is full"),
    ("_pickle.UnpicklingError: pickle data was truncated", "could not be loaded.*rm -r "),
    ("EOFError: Ran out of input", "could not be loaded"),
])
def test_faults_in_the_server_log_become_usage_errors(log, expected):
    fault = WarmCache.for_model(SHA, "0.3.36").fault(f"INFO: 127.0.0.1 POST\n{log}\n500 Internal Server Error")
    assert fault is not None and fault.exit_code == 2
    assert __import__("re").search(expected, str(fault))
    assert WarmCache.for_model(SHA, "0.3.36").fault("INFO: 200 OK") is None


def test_the_server_runs_in_the_cache_folder_with_the_disk_cache(tmp_path):
    cache = WarmCache.for_model(SHA, "0.3.36")
    server = LlamaServer(tmp_path / "m.gguf", threads=1, context_size=512, batch_threads=2, cache=cache)
    command = server.command()
    assert command[command.index("--cache_type") + 1] == "disk"
    assert command[command.index("--cache_size") + 1] == str(CACHE_BYTES)
    assert command[command.index("--n_threads_batch") + 1] == "2"
    assert "--cache" not in LlamaServer(tmp_path / "m.gguf", threads=1, context_size=512).command()


def _smollm2() -> bool:
    try:
        model_path(CATALOG["smollm2-135m"])
        return True
    except Exception:
        return False


@pytest.mark.skipif(not _smollm2(), reason="the SmolLM2 weight package is not installed")
def test_a_damaged_cache_ends_a_local_run_with_exit_2_before_loading(tmp_path, isolated_home):
    spec = CATALOG["smollm2-135m"]
    from cli_agent.local_model import runtime_version

    cache = WarmCache.for_model(spec.sha256 or "", runtime_version() or "")
    cache.folder.mkdir(parents=True)
    (cache.folder / "KEY").write_text(json.dumps({"model_sha256": "0" * 64, "runtime": "x"}))
    env = {"CLI_AGENT_HOME": str(isolated_home), "CI": "true", "CLI_AGENT_LOCAL_MODEL": "smollm2-135m",
           "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "cli_agent", "--model", "local", "-p", "hi", "-C", str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=120)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and "another model or runtime" in last and "rm -r" in last
