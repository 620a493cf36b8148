"""Start-up stays light: what `--version` and a one-shot run import (`python -X importtime`), that importing the
package has no side effects, and the caches that keep a start cheap (checked specs, built prompts, warm-up).

Budgets in time are for `benchmarks/run`, not for tests: these tests check what is imported and what is done,
which does not depend on how busy the machine is.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cli_agent.contracts.errors import SpecError
from cli_agent.prompt.builder import PromptBuilder, PromptContext
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer
from cli_agent.providers.openai_http import OpenAIHTTPProvider
from cli_agent.tools.registry import Registry, load_remembered
from cli_agent.tools.specs import content_key

NEVER_ON_VERSION = ("litellm", "prompt_toolkit", "rich.markdown")
NEVER_ON_ONE_SHOT = ("litellm", "prompt_toolkit", "rich.markdown", "click", "pygments")  # the last two: httpx.main


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "OPENAI_"))}
    return out | {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true"}


def imported(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `python -X importtime ARGV`; the result and every module it imported."""
    result = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env, cwd=cwd, capture_output=True,
                            text=True, timeout=120)
    modules = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    return result, modules - {"imported package"}


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in names))


@pytest.mark.slow
def test_version_imports_nothing_heavy(tmp_path, env):
    result, modules = imported(["-m", "cli_agent", "--version"], env, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("cli-agent ")
    assert "cli_agent.cli.entry" in modules  # the run really went through importtime
    assert loaded(modules, NEVER_ON_VERSION) == []
    assert loaded(modules, ("pydantic", "httpx", "jsonschema", "typer", "cli_agent.session", "cli_agent.agent")) == []


@pytest.mark.slow
def test_one_shot_over_http_imports_no_litellm_and_checks_specs_once(tmp_path, env):
    ws = tmp_path / "ws"
    ws.mkdir()
    argv = ["-m", "cli_agent", "-p", "hi", "--model", "openai/x"]
    with FakeOpenAIServer(instant="hello from the fake") as server:
        first, modules = imported([*argv, "--api-base", server.url], env, ws)
        assert first.returncode == 0, first.stderr[-2000:]
        assert "hello from the fake" in first.stdout
        assert "httpx" in modules  # it did go through the HTTP transport
        assert loaded(modules, NEVER_ON_ONE_SHOT) == []
        assert list((tmp_path / "home" / "cache" / "checked-specs").iterdir())  # the spec checks passed once
        second, modules = imported([*argv, "--api-base", server.url], env, ws)
    assert second.returncode == 0, second.stderr[-2000:]
    assert loaded(modules, NEVER_ON_ONE_SHOT) == []
    assert loaded(modules, ("jsonschema",)) == []  # the checked specs are not checked again


# What a scripted one-shot run never imports: each is deferred to where it is first used (docs/architecture.md,
# "Imports"), so a run that does not use it does not pay for it.
DEFERRED = ("litellm", "httpx", "acp", "mcp", "anyio", "tree_sitter", "xllamacpp", "PIL", "html_to_markdown",
            "http.client", "ssl", "email", "cli_agent.tools.web.fetch", "prompt_toolkit", "rich", "typer", "click",
            "pydantic", "jsonschema", "regex", "pygments", "asyncio", "cli_agent.mcp", "cli_agent.workflows",
            "cli_agent.ui.repl", "cli_agent.ui.view", "cli_agent.serve", "cli_agent.eval", "cli_agent.cli.app",
            "cli_agent.agent.judge.rewrite", "configparser", "ctypes", "cli_agent.sandbox.network.proxy", "html")


@pytest.mark.slow
def test_a_scripted_one_shot_run_imports_none_of_the_deferred_modules(tmp_path, env):
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "replies.json"
    script.write_text('[{"text": "hello from the script"}]', encoding="utf-8")
    argv = ["-m", "cli_agent", "-p", "hi", "--model", f"scripted:{script}"]
    imported(argv, env, ws)  # the first start checks the packaged specs (jsonschema) and remembers them
    result, modules = imported(argv, env, ws)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "hello from the script" in result.stdout
    assert "cli_agent.agent.loop" in modules  # the run really went through importtime
    assert loaded(modules, DEFERRED) == []


@pytest.mark.slow
def test_importing_the_package_creates_nothing_and_prints_nothing(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "XDG_"))}
    env |= {"HOME": str(home), "CLI_AGENT_HOME": str(tmp_path / "agent-home")}
    result = subprocess.run([sys.executable, "-c", "import cli_agent, cli_agent.cli.main"], env=env, cwd=cwd,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "home"]
    assert list(home.iterdir()) == [] and list(cwd.iterdir()) == []


# -- the checked-specs cache -----------------------------------------------------------------------------------

SPEC = """\
name = "probe"
category = "Explore"
description = "Probes a path."
mutates = false
kind = "read"
verb = "Probe"
[parameters]
type = "{kind}"
properties = {{ path = {{ type = "string" }} }}
required = ["path"]
"""


def probe(ctx: object, path: str) -> dict[str, str]:
    return {"path": path}


def spec_dir(tmp_path: Path, kind: str = "object") -> Path:
    folder = tmp_path / "specs"
    folder.mkdir(exist_ok=True)
    (folder / "probe.toml").write_text(SPEC.format(kind=kind))
    return folder


def test_checks_that_passed_are_remembered_by_content(tmp_path):
    cache = tmp_path / "cache"
    folder = spec_dir(tmp_path)
    assert [s.name for s in load_remembered(folder, {"probe": probe}, cache)] == ["probe"]
    assert [p.name for p in cache.iterdir()] == [content_key(folder)]
    assert [s.name for s in load_remembered(folder, {"probe": probe}, cache)] == ["probe"]


def test_a_changed_spec_is_checked_in_full_despite_the_marker(tmp_path):
    cache = tmp_path / "cache"
    folder = spec_dir(tmp_path)
    load_remembered(folder, {"probe": probe}, cache)
    spec_dir(tmp_path, kind="objekt")  # not a JSON Schema type: the meta-schema check refuses it
    with pytest.raises(SpecError, match=r"probe\.toml:8: parameters"):
        load_remembered(folder, {"probe": probe}, cache)
    assert len(list(cache.iterdir())) == 1  # nothing remembered for the broken content


def test_a_marker_skips_only_the_schema_checks(tmp_path):
    cache = tmp_path / "cache"
    folder = spec_dir(tmp_path, kind="objekt")
    cache.mkdir()
    (cache / content_key(folder)).touch()  # as if this content had passed: the JSON Schema checks are skipped ...
    assert [s.name for s in load_remembered(folder, {"probe": probe}, cache)] == ["probe"]
    with pytest.raises(SpecError, match="no handler"):  # ... the handler check is not
        load_remembered(folder, {}, cache)


def test_an_unwritable_cache_only_means_checking_every_time(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert [s.name for s in load_remembered(spec_dir(tmp_path), {"probe": probe}, blocker / "cache")] == ["probe"]


# -- built prompts and the REPL's warm-up ------------------------------------------------------------------------

def test_the_same_context_again_is_a_lookup_and_schemas_stay_copies():
    builder = PromptBuilder(Registry.builtin())
    ctx = PromptContext(task="fix the bug", files=("a.py",))
    first = builder.build(ctx)
    assert builder.build(PromptContext(task="fix the bug", files=("a.py",))) is first
    assert builder.renders == 1
    first.schemas[0]["function"]["name"] = "changed"
    assert builder.build(ctx).schemas[0]["function"]["name"] != "changed"
    assert builder.build(PromptContext(task="fix the bug", files=["a.py"])).key == first.key  # type: ignore[arg-type]


def test_the_repl_warms_up_the_http_transport():
    from cli_agent.ui.repl.start.startup import warm_up

    loaded_event = threading.Event()
    provider = OpenAIHTTPProvider("openai/x", api_base="http://127.0.0.1:9/v1")
    thread = warm_up(provider, load=loaded_event.set)
    assert thread is not None
    thread.join(30)
    assert loaded_event.is_set()
    provider.preload()  # the real one: the transport's modules, no connection
    assert "httpx" in sys.modules and "httpcore" in sys.modules


# What the REPL's main thread loads before its first prompt: the command line, the REPL and its views, and the
# floors they stand on. The agent's stack (settings, session, tools, sandbox, model) loads behind the prompt, in the
# start-up's thread; a package imported here would make the prompt wait for it.
BEFORE_THE_PROMPT = {"cli_agent", "cli_agent.cli", "cli_agent.contracts", "cli_agent.fs", "cli_agent.ui"}
REPL_UP_TO_ITS_PROMPT = """
import sys
import cli_agent.cli.main
from cli_agent.ui.repl.repl import Repl
from cli_agent.ui.repl.start.startup import Startup
from cli_agent.ui.repl.start.trust_question import ask_trust

assert ask_trust(lambda: None, None) is False  # no terminal here: nothing to ask, nothing loaded
repl = Repl(Startup(lambda: None), None, None)  # its commands, completion and toolbar, as the first prompt has them
assert repl.commands.get("compact") is not None
print(" ".join(sorted({".".join(m.split(".")[:2]) for m in sys.modules if m.startswith("cli_agent")})))
"""


@pytest.mark.slow
def test_the_repl_up_to_its_first_prompt_loads_none_of_the_agents_stack(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")} | {"CLI_AGENT_HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", REPL_UP_TO_ITS_PROMPT], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) <= BEFORE_THE_PROMPT
