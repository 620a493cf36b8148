"""Plumbing of the local model with SmolLM2-135M (fast): llama.cpp's own server (xllamacpp) on 127.0.0.1, started,
talked to through our provider, and stopped with nothing left behind. These assert plumbing, not the model's
choices."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from clikit import reaped
from localkit import alive, smollm2_missing, wait_for

from cli_agent.agent.wire import JsonProtocol
from cli_agent.config.settings import LocalSettings
from cli_agent.contracts.errors import ProviderError
from cli_agent.contracts.messages import Message
from cli_agent.prompt.builder import json_protocol_schema
from cli_agent.providers.base import ProviderReply, ProviderRequest
from cli_agent.providers.local.model import CATALOG, model_path
from cli_agent.providers.local.provider import KEY_VARIABLES, LocalProvider
from cli_agent.providers.local.reply import SAMPLING, runs_away
from cli_agent.providers.local.server import LlamaServer
from cli_agent.tools.registry import Registry

# One worker of a parallel run (`-n N --dist loadgroup`) runs them all: the module's server starts once.
pytestmark = [pytest.mark.slow, pytest.mark.skipif(smollm2_missing() is not None, reason=str(smollm2_missing())),
              pytest.mark.xdist_group("smollm2")]
SMOL = LocalSettings(model="smollm2-135m", context_size=4096)
TOOLS = Registry.builtin().model_tools("", None, None)
SCHEMA = json_protocol_schema(TOOLS)
SYSTEM = ("You are a coding agent. Reply with one JSON object: a tool call {\"tool\", \"parameters\", \"terminate\"}, "
          "or {\"tool\": \"answer\", \"parameters\": {\"text\": ...}, \"terminate\": true} when done.")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CI", "true")  # as in CI: no server is kept after its test (providers/local/kept.py)


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLI_AGENT_HOME", str(tmp_path_factory.mktemp("home")))
        patch.setenv("CI", "true")
        provider = LocalProvider(SMOL, quiet=True)
    yield provider
    provider.close()


def ask(provider: LocalProvider, task: str, **options) -> ProviderReply:
    return ask_streamed(provider, task, **options)[-1]


def ask_streamed(provider: LocalProvider, task: str, **options) -> list:
    request = ProviderRequest((Message("system", SYSTEM), Message("user", task)), options={
        "model": "local", "protocol": "json", "temperature": 0.0, "max_tokens": 200,
        "response_format": {"type": "json_object", "schema": SCHEMA}} | options, timeout_s=120)
    items = list(provider.stream(request))
    assert all(isinstance(item, str) for item in items[:-1])
    assert isinstance(items[-1], ProviderReply)
    return items


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_the_server_starts_on_loopback_and_answers_through_our_provider(provider):
    reply = ask(provider, "Say hello.")
    assert provider.server.api_base.startswith("http://127.0.0.1:")
    assert reply.text.strip() and reply.finish_reason in ("stop", "length")
    body = provider.request_body(ProviderRequest((Message("user", "x"),), options={"model": "local",
                                                                                   "protocol": "json"}))
    assert body["model"] == "local" and "protocol" not in body and body["max_tokens"] > 0
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["id_slot"] == 0 and body["cache_prompt"] is True  # one slot, its prompt cache on
    assert {k: body[k] for k in SAMPLING} == SAMPLING  # sampling explicit, not the runtime's defaults
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


def test_a_reply_streams_in_pieces_and_ends_with_its_usage(provider):
    items = ask_streamed(provider, "Write a short poem about the sea.", max_tokens=40)
    pieces, reply = items[:-1], items[-1]
    assert len(pieces) > 5 and "".join(pieces) == reply.text  # token by token, not one body
    assert reply.usage.completion_tokens == 40 and reply.finish_reason == "length"


def test_the_second_request_evaluates_only_what_follows_the_shared_prefix(provider):
    first = ask(provider, "Read README.md and say what it is about.", max_tokens=30)
    second = ask(provider, "Read setup.py and say what it is about.", max_tokens=30)
    # The system prompt and the start of the user turn are shared: served from the slot's cache.
    assert 0 < second.usage.cached_tokens < second.usage.prompt_tokens
    assert second.usage.evaluated_tokens < first.usage.prompt_tokens // 4
    again = ask(provider, "Read setup.py and say what it is about.", max_tokens=30)
    assert again.usage.evaluated_tokens <= 1  # the same prompt: all of it cached (llama.cpp re-evaluates one)


def test_schema_constrained_output_always_parses(provider):
    tasks = ["List the files here.", "Read README.md.", "Create hello.py that prints hello.",
             "What is 2 + 2?", "Delete the file old.txt.", "Search for TODO in the code."]
    parsed_replies = 0
    for task in tasks:
        reply = ask(provider, task, max_tokens=400)
        if reply.finish_reason == "length":  # SmolLM2 can run on inside a string: cut as it repeats itself
            assert runs_away(reply.text) and len(reply.text) < 4000, reply.text
            assert JsonProtocol().parse(reply, 1).error is not None  # a malformed reply, never a call
            continue
        parsed_replies += 1
        obj = json.loads(reply.text)
        jsonschema.validate(obj, SCHEMA)
        parsed = JsonProtocol().parse(reply, 1)
        assert parsed.error is None, (task, reply.text)
        assert parsed.calls or obj["tool"] == "answer"
    assert parsed_replies >= len(tasks) // 2


def test_the_server_stays_warm_between_requests(provider):
    pid = provider.server.pid
    ask(provider, "Say hi.")
    ask(provider, "Say hi again.")
    assert provider.server.pid == pid and alive(pid)


def test_close_stops_the_server_and_a_dead_server_is_reported():
    local = LocalProvider(SMOL, quiet=True)
    pid = local.server.pid
    try:
        ask(local, "Say hello.")
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: local.server.process.poll() is not None, 10)
        with pytest.raises(ProviderError, match="local model server stopped"):
            ask(local, "Say hello.")
    finally:
        local.close()
    assert not alive(pid)
    local.close()  # twice is fine


def cli(args, cwd: Path, home: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_") and k not in KEY_VARIABLES}
    env |= {"CLI_AGENT_HOME": str(home), "CI": "true", "CLI_AGENT_LOCAL_MODEL": "smollm2-135m",
            "CLI_AGENT_LOCAL_CONTEXT_SIZE": "4096"}
    return subprocess.Popen([sys.executable, "-m", "cli_agent", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def server_child(parent: int) -> int:
    def find():
        for pid in children(parent):
            try:
                if b"cli_agent.providers.local.engine" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return pid
            except OSError:
                continue
        return None

    return wait_for(find)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGKILL, -9)])
def test_no_orphan_server_when_cli_agent_is_stopped(tmp_path, sig, code):
    (tmp_path / "notes.txt").write_text("a\nb\n")
    proc = cli(["--model", "local", "-p", "Read notes.txt and explain it at length.", "--timeout", "120"],
               tmp_path, tmp_path / "home")
    with reaped(proc):
        child = server_child(proc.pid)
        time.sleep(0.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    wait_for(lambda: not alive(child), 10)  # SIGKILL: the kernel's parent-death signal ends it


def test_the_step_limit_ends_a_local_run(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = cli(["--model", "local", "-p", "Read a.py.", "--max-steps", "1", "--output", "json", "--yes"],
               tmp_path, tmp_path / "home")
    out, err = proc.communicate(timeout=120)
    report = json.loads(out)
    assert report["steps"] == 1
    # A second request was needed and refused: the model chose a tool, or its reply did not parse (on a busy machine
    # the server runs one thread, and SmolLM2's greedy reply there is a string cut off unterminated).
    if report["tool_calls"] or any(w.startswith("unusable reply") for w in report["warnings"]):
        assert proc.returncode == 4 and report["status"] == "step_limit", err
    else:  # it answered at once
        assert proc.returncode == 0 and report["answer"], err
    assert not children(proc.pid)


def test_a_server_that_cannot_load_its_model_is_reported_with_its_log(tmp_path):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file")
    server = LlamaServer(bad, threads=1, context_size=512)
    server.start()
    try:
        with pytest.raises(ProviderError, match=r"exited with code \d+ while loading broken\.gguf: .+"):
            server.wait_ready(120)
    finally:
        server.stop()
    assert server.process is None


def test_a_server_whose_port_is_taken_says_so_in_one_line_and_exits_1():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = LlamaServer(model_path(CATALOG["smollm2-135m"]), threads=1, context_size=512)
        server.port = taken.getsockname()[1]
        done = subprocess.run(server.command(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stdout.strip().splitlines()[-1].startswith("local_engine: the server did not start")
    assert "couldn't bind" in done.stderr + done.stdout


def test_a_port_taken_before_the_server_binds_it_is_chosen_again(monkeypatch):
    import socket

    from cli_agent.providers.local import server as local_server

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports, free = iter([taken.getsockname()[1]]), local_server._free_port
        monkeypatch.setattr(local_server, "_free_port", lambda: next(ports, None) or free())
        server = LlamaServer(model_path(CATALOG["smollm2-135m"]), threads=1, context_size=512)
        server.start()
        try:
            assert server.port == taken.getsockname()[1]
            server.wait_ready(120)
            assert server.port != taken.getsockname()[1] and alive(server.pid)
        finally:
            server.stop()


def test_a_local_run_whose_server_fails_ends_in_one_line_and_exit_1(tmp_path):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_") and k not in KEY_VARIABLES}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "CLI_AGENT_LOCAL_MODEL": str(bad)}
    done = subprocess.run([sys.executable, "-m", "cli_agent", "--model", "local", "-p", "Say hi."], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "exited with code 1 while loading broken.gguf" in lines[0], done.stderr
    assert "failed to load model" in lines[0]


def test_a_second_process_starts_warm_from_the_saved_slot(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    first = LocalProvider(SMOL, quiet=True)
    try:
        cold = ask(first, "Read README.md and say what it is about.", max_tokens=30)
    finally:
        first.close()  # saves the slot's state
    assert cold.usage.cached_tokens == 0
    saved = list((first.cache.folder).glob("*.slot"))
    assert len(saved) == 1 and not list(first.cache.folder.glob("*.tmp"))
    second = LocalProvider(SMOL, quiet=True)
    try:
        warm = ask(second, "Read setup.py and say what it is about.", max_tokens=30)
    finally:
        second.close()
    assert warm.usage.cached_tokens > cold.usage.prompt_tokens // 2  # the system prompt came from the file


def test_a_process_whose_last_request_has_another_prompt_leaves_the_plan_s_state_saved(tmp_path, monkeypatch):
    """A candidate's rewrite asks with its own system prompt: the slot then holds that prompt, and a save at close
    filed it under the plan's name, so the next process's first request was evaluated whole."""
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    first = LocalProvider(SMOL, quiet=True)
    try:
        cold = ask(first, "Read README.md and say what it is about.", max_tokens=30)
        rewrite = ProviderRequest((Message("system", "You fix Python code. Reply with one python block. " * 8),
                                   Message("user", "def f():\n    return 1\n")),
                                  options={"temperature": 0.7, "max_tokens": 20}, timeout_s=120)
        assert isinstance(list(first.stream(rewrite))[-1], ProviderReply)
    finally:
        first.close()
    second = LocalProvider(SMOL, quiet=True)
    try:
        warm = ask(second, "Read setup.py and say what it is about.", max_tokens=30)
    finally:
        second.close()
    assert warm.usage.cached_tokens > cold.usage.prompt_tokens // 2  # the plan's prefix, not the rewrite's


def test_a_request_cut_short_leaves_no_state_to_save_and_close_does_not_wait(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    provider = LocalProvider(SMOL, quiet=True)
    try:
        stream = provider.stream(ProviderRequest((Message("system", SYSTEM), Message("user", "Tell a long story.")),
                                                 options={"max_tokens": 2000}, timeout_s=120))
        assert isinstance(next(stream), str)  # generating
        stream.close()  # as an interrupted turn does
        started = time.monotonic()
    finally:
        provider.close()
    assert time.monotonic() - started < 5 and not list(provider.cache.folder.glob("*.slot"))


def test_a_slot_file_the_server_cannot_load_is_removed_and_the_run_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    provider = LocalProvider(SMOL, quiet=True)
    try:
        request = ProviderRequest((Message("system", SYSTEM), Message("user", "x")), options={
            "response_format": {"type": "json_object", "schema": SCHEMA}})
        from cli_agent.providers.local.reply import plan_key

        damaged = provider.cache.folder / provider.cache.slot_file(plan_key(request))
        damaged.write_bytes(b"\x00garbage" * 100)
        reply = ask(provider, "Say hello.", max_tokens=30)
    finally:
        provider.close()
    assert reply.usage.prompt_tokens > 0 and reply.usage.cached_tokens == 0
    assert damaged.is_file() and damaged.stat().st_size > 1000  # replaced by the state saved at close


def test_speculative_decoding_is_on_by_default_gives_the_same_reply_and_off_turns_it_off(provider):
    import httpx

    command = provider.server.command()
    assert command[command.index("--speculative") + 1] == "ngram_mod"  # the default: n-gram lookup
    code = "def mean(values):\n    total = 0\n    for value in values:\n        total += value\n" \
           "    return total / (len(values) + 1)\n"
    body = provider.request_body(ProviderRequest((Message("user", f"Repeat this code:\n```python\n{code}```"),),
                                                 options={"max_tokens": 80, "temperature": 0.0}))
    body |= {"stream": False, "id_slot": -1}
    body.pop("stream_options", None)
    off = LlamaServer(provider.model_path, threads=2, context_size=4096, speculative="off")
    assert off.command()[off.command().index("--speculative") + 1] == "off"
    off.start()
    try:
        off.wait_ready(120)
        replies = [httpx.post(f"{base}/chat/completions", json=body, timeout=120).json()
                   for base in (provider.server.api_base, off.api_base)]
    finally:
        off.stop()
    texts = [r["choices"][0]["message"]["content"] for r in replies]
    assert texts[0] and texts[0] == texts[1]  # lookup decoding changes no token


def test_the_wait_for_a_first_token_is_told_before_the_request_from_the_speed_measured(tmp_path, monkeypatch):
    from cli_agent.providers.local.prompt_speed import FILE, PromptSpeed

    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    listing = "".join(f"src/pkg/module_{n}.py\n" for n in range(300))  # a project's part, as a first request has

    def request(task: str) -> ProviderRequest:
        return ProviderRequest((Message("system", SYSTEM), Message("user", f"{listing}\n{task}")),
                               options={"max_tokens": 5}, timeout_s=120)

    first = LocalProvider(SMOL, quiet=True)
    try:
        assert first.first_token_seconds(request("Fix calc.py.")) is None  # never measured on this machine
        assert isinstance(list(first.stream(request("Fix calc.py.")))[-1], ProviderReply)
        told_new = first.first_token_seconds(request("Fix parse.py."))
        reply = list(first.stream(request("Fix parse.py.")))[-1]
        assert isinstance(reply, ProviderReply) and reply.usage.cached_tokens > 0
        told_held = first.first_token_seconds(request("Fix parse.py."))  # the slot holds all of it now
    finally:
        first.close()
    assert told_new is not None and told_held is not None and 0 <= told_held < told_new
    kept = PromptSpeed.kept_in(first.cache.folder)
    assert (first.cache.folder / FILE).is_file() and kept.chars_per_s is not None and kept.chars_per_s > 0
    second = LocalProvider(SMOL, quiet=True)  # the next process: the speed kept, the system prompt restored
    try:
        told = second.first_token_seconds(request("Fix calc.py."))
    finally:
        second.close()
    assert told is not None and told == kept.seconds(len(f"<user>\n{listing}\nFix calc.py.\n"))
