"""The lean `-p` path (`cli.root_flags`): it knows the root's options as the Typer app declares them, it accepts
only what the app would parse to the same values, and a run through it ends exactly as the same run through the
app; a one-shot process never imports Typer (nor click, nor Rich), nor httpcore's HTTP/2 (h2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_agent.cli import main as cli
from cli_agent.cli.app import app
from cli_agent.cli.main import ROOT_OPTIONS, root_flags, run
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer
from cli_agent.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.usefixtures("isolated_home")

ROOT = typer.main.get_command(app)


def oneshot_flags(argv: list[str]) -> dict[str, Any] | None:
    """The lean path's values for a plain one-shot run (`-p` given), else None."""
    values = root_flags(argv)
    return values if values is not None and "prompt" in values else None


def repl_flags(argv: list[str]) -> dict[str, Any] | None:
    """The lean path's values for a plain interactive start (no `-p`), else None."""
    values = root_flags(argv)
    return values if values is not None and "prompt" not in values else None
# The Typer app's modules: a one-shot run parsed by the lean path imports none of them.
TYPER_APP = ("cli_agent.cli.app", "cli_agent.cli.flags", "cli_agent.cli.check_commands",
             "cli_agent.cli.config_commands", "cli_agent.cli.serve_commands", "cli_agent.cli.session_commands",
             "cli_agent.cli.tool_commands")
KINDS = {"str": "str", "int": "int", "float": "float", "boolean": "flag", "path": "path"}


def _kind(param: Any) -> str:
    assert param.is_flag == (param.type.name == "boolean")
    return KINDS[param.type.name]


def test_the_lean_table_is_the_apps_root_options():
    single = [p for p in ROOT.params if not p.multiple]  # a repeatable option (--image) is the app's alone
    declared = {opt: (p.name, _kind(p)) for p in single if p.name != "version" for opt in p.opts}
    assert declared == ROOT_OPTIONS
    assert all(not p.secondary_opts and p.nargs == 1 for p in single)


def _app_values(argv: list[str]) -> dict[str, Any] | None:
    """The root's values as the app parses `argv`, or None when it refuses them."""
    try:
        with ROOT.make_context("cli-agent", list(argv), obj=cli.AppState()) as ctx:
            return dict(ctx.params)
    except (typer.Exit, typer.Abort, typer.TyperException):
        return None


TOKENS = st.sampled_from([*ROOT_OPTIONS, "--version", "-h", "--help", "tools", "-yp", "-phi", "--", "--model=m",
                          "--max-steps=3", "--yes=1", "--prompt=", "hi", "-", "", "-x", "3", "0", "abc", "1.5",
                          "nan", "=", "a=b", "openai/x", "--nope"])


@settings(max_examples=400, deadline=None)
@given(st.lists(TOKENS, max_size=8))
def test_what_the_lean_parser_accepts_the_app_parses_to_the_same_values(argv):
    lean = oneshot_flags(argv)
    if lean is None:
        return
    parsed = _app_values(argv)
    assert parsed is not None, argv
    parsed.pop("version")  # its callback exits when given; the value kept is the callback's None
    parsed["image"] = parsed["image"] or None  # no --image: Click gives () or None, both "no image"
    expected = {name: None for name, _ in ROOT_OPTIONS.values()} | {"continue_": False, "image": None} | lean
    assert parsed == expected, argv


@pytest.mark.parametrize("argv", [
    ["-p", "hi", "-m", "openai/x"], ["--prompt=hi", "--model", "openai/x", "-y", "--no-tools"],
    ["-p", "hi", "--max-steps", "3", "--timeout", "2.5", "--trust", "-c"], ["-p", "-", "--config", "a.toml"],
])
def test_plain_one_shot_arguments_take_the_lean_path(argv):
    assert oneshot_flags(argv) is not None


@pytest.mark.parametrize("argv", [
    [], ["hi"], ["-p"], ["-p", "hi", "tools"], ["-p", "hi", "--help"], ["-p", "hi", "--version"],
    ["-p", "hi", "-m", "a", "--model", "b"], ["-phi"], ["-yp", "hi"], ["-p", "hi", "--max-steps", "many"],
    ["-p", "-x"], ["-p", ""], ["-p", "hi", "--yes=true"], ["-p", "hi", "--", "x"], ["-m", "x"],
])
def test_everything_else_goes_to_the_app(argv):
    assert oneshot_flags(argv) is None


@pytest.mark.parametrize(("argv", "lean"), [
    ([], {}), (["-m", "x"], {"model": "x"}),
    (["--model=x", "-y", "--trust"], {"model": "x", "yes": True, "trust": True}),
    (["-c"], {"continue_": True}), (["-p", "hi"], None), (["tools"], None), (["--help"], None), (["-m"], None),
    (["-m", "a", "-m", "b"], None), (["--version"], None),
])
def test_a_plain_interactive_start_takes_the_lean_path_too(argv, lean):
    assert repl_flags(argv) == lean


def _both_paths(argv: list[str], replies: list[dict[str, Any]], monkeypatch, capsys) -> list[tuple[Any, ...]]:
    outcomes = []
    for lean in (True, False):
        if not lean:
            monkeypatch.setattr(cli, "root_flags", lambda argv: None)
        code = run(argv, provider_factory=lambda settings: ScriptedProvider(list(replies), native_tools=True))
        out, err = capsys.readouterr()
        outcomes.append((code, out, err))
    return outcomes


@pytest.mark.parametrize(("extra", "code"), [
    ([], 0), (["-o", "json"], 0), (["--max-steps", "0"], 2), (["--output", "bogus"], 2),
    (["-c", "--resume", "abc"], 2), (["--resume", "nope"], 2), (["--config", "missing.toml", "-o", "json"], 2),
    (["-C", "no-such-dir"], 2),
])
def test_a_run_ends_the_same_through_either_path(tmp_path, monkeypatch, capsys, extra, code):
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    argv = ["-p", "hi", "--model", "x", *extra]
    lean, app_path = _both_paths(argv, [{"text": "Pong."}], monkeypatch, capsys)
    assert lean[0] == code, lean
    if "json" in extra:  # the trace file's name and the session differ from run to run
        lean_out, app_out = json.loads(lean[1]), json.loads(app_path[1])
        for report in (lean_out, app_out):
            report.pop("trace", None)
            report.pop("session", None)
        assert (lean[0], lean_out, lean[2]) == (app_path[0], app_out, app_path[2])
    else:
        assert lean == app_path


@pytest.mark.slow
def test_a_one_shot_process_imports_no_typer_click_rich_h2_or_pydantic(tmp_path: Path):
    """pydantic and jsonschema: no config file, and the packaged specs were checked by the first start. Nor LiteLLM
    or the bundled model's runtime (xllamacpp): the providers face imports the local model's modules, never them."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "OPENAI_"))}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true"}
    with FakeOpenAIServer(instant="hello from the fake") as server:
        argv = ["-m", "cli_agent", "-p", "hi", "--model", "openai/x", "--api-base", server.url, "--yes", "-o", "text"]
        first = subprocess.run([sys.executable, *argv], env=env, cwd=ws, capture_output=True, text=True, timeout=120)
        assert first.returncode == 0, first.stderr[-2000:]
        result = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env, cwd=ws, capture_output=True,
                                text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "hello from the fake" in result.stdout
    modules = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    assert "cli_agent.ui.headless.oneshot" in modules  # the run really went through importtime
    heavy = sorted(m for m in modules if m.split(".")[0] in ("typer", "click", "rich", "h2", "hpack", "pydantic",
                                                              "pydantic_core", "jsonschema", "litellm", "xllamacpp")
                   or m in TYPER_APP)
    assert heavy == []
    assert "httpcore" in modules  # it did go through the HTTP transport


@pytest.mark.slow
def test_httpcore_still_imports_its_http2_connection_afterwards():
    code = ("import sys; from cli_agent.providers.openai_http import import_httpx; import_httpx(); "
            "assert 'h2' not in sys.modules; from httpcore._sync.http2 import HTTP2Connection; "
            "print(HTTP2Connection.__module__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "httpcore._sync.http2", result.stderr[-2000:]
