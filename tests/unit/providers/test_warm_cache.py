"""Warm start: llama.cpp's slot files, in a folder keyed per model and runtime, one file per plan; a folder of
another model or runtime is refused (a one-line error naming the fix, exit 2, before any model loads)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cli_agent.contracts.errors import UsageError
from cli_agent.providers.local.model import CATALOG, model_path
from cli_agent.providers.local.provider import LocalProvider
from cli_agent.providers.local.server import LlamaServer
from cli_agent.providers.local.warm_cache import WarmCache

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


def test_a_key_that_is_not_json_is_refused():
    cache = WarmCache.for_model(SHA, "0.3.36")
    cache.check()
    (cache.folder / "KEY").write_text("{half")
    with pytest.raises(UsageError, match=r"can't be used.*rm -r .*warm_start = false"):
        cache.check()


def test_a_plan_has_one_slot_file_saved_under_a_temporary_name_first(isolated_home):
    cache = WarmCache.for_model(SHA, "2026.10.11549")
    cache.check()
    name = cache.slot_file("AB" * 32)
    assert name == "ab" * 16 + ".slot" and cache.slot_file("../../etc" + "0" * 40) == "ec" + "0" * 30 + ".slot"
    temporary = cache.temporary(name)
    assert not temporary.startswith(".") and temporary != name  # the server refuses names starting with a dot
    (cache.folder / temporary).write_bytes(b"state")
    assert not cache.has(name)
    cache.commit(temporary, name)
    assert cache.has(name) and not (cache.folder / temporary).exists()
    cache.discard(name)
    cache.discard(name)  # twice is fine
    assert not cache.has(name)


def test_the_server_is_given_the_cache_folder_for_its_slot_files(tmp_path):
    cache = WarmCache.for_model(SHA, "2026.10.11549")
    server = LlamaServer(tmp_path / "m.gguf", threads=1, context_size=512, batch_threads=2, cache=cache)
    command = server.command()
    assert command[command.index("--slot-save-path") + 1] == str(cache.folder)
    assert command[command.index("--batch-threads") + 1] == "2"
    assert "--slot-save-path" not in LlamaServer(tmp_path / "m.gguf", threads=1, context_size=512).command()


def _smollm2() -> bool:
    try:
        model_path(CATALOG["smollm2-135m"])
        return True
    except Exception:
        return False


@pytest.mark.slow  # runs cli-agent
@pytest.mark.skipif(not _smollm2(), reason="the SmolLM2 weight package is not installed")
def test_a_damaged_cache_ends_a_local_run_with_exit_2_before_loading(tmp_path, isolated_home):
    spec = CATALOG["smollm2-135m"]
    from cli_agent.providers.local.runtime import runtime_version

    cache = WarmCache.for_model(spec.sha256 or "", runtime_version() or "")
    cache.folder.mkdir(parents=True)
    (cache.folder / "KEY").write_text(json.dumps({"model_sha256": "0" * 64, "runtime": "x"}))
    env = {"CLI_AGENT_HOME": str(isolated_home), "CI": "true", "CLI_AGENT_LOCAL_MODEL": "smollm2-135m",
           "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "cli_agent", "--model", "local", "-p", "hi", "-C", str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=120)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and "another model or runtime" in last and "rm -r" in last


@pytest.mark.parametrize(("answer", "restored", "kept"), [(200, True, True), (400, False, False), (None, False, True)])
def test_a_restore_refused_removes_the_file_and_one_that_got_no_turn_keeps_it(tmp_path, answer, restored, kept):
    """A kept server still reading the request the last process cut short answers the restore only after it: a
    restore that waited past its time is no verdict on the file (it was removed, and the next processes started
    cold), one the server refused is."""
    class Slots(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if answer is None:
                time.sleep(1.5)  # busy past the restore's time
                return
            self.send_response(answer)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    stub = ThreadingHTTPServer(("127.0.0.1", 0), Slots)
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    try:
        cache = WarmCache.for_model(SHA, "2026.10.11549")
        cache.check()
        server = LlamaServer(tmp_path / "m.gguf", threads=1, context_size=512, cache=cache)
        server.port = stub.server_address[1]
        provider = LocalProvider.__new__(LocalProvider)  # only its restore: no model, no server of its own
        provider.cache, provider.server, provider._plan = cache, server, "ab" * 32
        (cache.folder / cache.slot_file("ab" * 32)).write_bytes(b"state")
        assert provider._restore(1.0) is restored
        assert cache.has(cache.slot_file("ab" * 32)) is kept
    finally:
        stub.shutdown()
        stub.server_close()
