"""The command line's entry point: the arguments to a command, and errors to exit codes, in one place (`run`).

A plain one-shot run (`-p TEXT` with root flags, each given in full: `--model M`, `--model=M`, `-y`) and a plain
interactive start (root flags only) are parsed here, without importing Typer and building its app (a seventh of a
one-shot start, a tenth of the REPL's); everything else, including
every malformed or unusual argument list, goes to the Typer app (`cli.app`), which parses and reports it as
always. Both paths run the same code (`cli.state`). The provider factory is injectable (`run(argv,
provider_factory=...)`), so tests drive the real CLI with the scripted provider without patching.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import signal
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from cli_agent.cli.state import resume_from, run_interactive
from cli_agent.contracts import AppState, StopReason, errors, escape_for_terminal, flags_given, json_for_output

# The root's options as the Typer app declares them (a test holds the two together): spelling -> (name, kind).
# Kinds: "str", "int", "float", "path" take a value; "flag" is True when given.
ROOT_OPTIONS: dict[str, tuple[str, str]] = {
    "-p": ("prompt", "str"), "--prompt": ("prompt", "str"), "-m": ("model", "str"), "--model": ("model", "str"),
    "--api-base": ("api_base", "str"), "--api-key": ("api_key", "str"), "-C": ("workspace", "str"),
    "--workspace": ("workspace", "str"), "-y": ("yes", "flag"), "--yes": ("yes", "flag"),
    "--protocol": ("protocol", "str"), "--max-steps": ("max_steps", "int"), "--timeout": ("timeout", "float"),
    "-o": ("output", "str"), "--output": ("output", "str"), "--trace": ("trace", "str"),
    "--no-tools": ("no_tools", "flag"), "--config": ("config", "path"), "--trust": ("trust", "flag"),
    "-c": ("continue_", "flag"), "--continue": ("continue_", "flag"), "--resume": ("resume", "str"),
    "--attempts": ("attempts", "int"), "--require-verified": ("require_verified", "flag"),
    "--reasoning-effort": ("reasoning_effort", "str"), "--mode": ("mode", "str"),
}  # --image (repeatable) is the app's alone
_CONVERT = {"str": str, "int": int, "float": float, "path": Path}


def root_flags(argv: list[str]) -> dict[str, Any] | None:
    """The root's values when `argv` is only root flags, each given in full, or None when the Typer app should
    parse it: a command, `--help`/`--version`, an option given twice, a joined short option, a value that is empty,
    looks like an option or does not convert. The app then parses it and reports any error as it always has."""
    values: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=") if argv[i].startswith("--") else (argv[i], "", "")
        if name not in ROOT_OPTIONS:
            return None
        key, kind = ROOT_OPTIONS[name]
        if key in values:
            return None
        if kind == "flag":
            if eq:
                return None
            values[key] = True
            i += 1
            continue
        if not eq:
            if i + 1 == len(argv):
                return None
            value = argv[i + 1]
        if not value or (value.startswith("-") and value != "-"):
            return None
        try:
            values[key] = _CONVERT[kind](value)
        except ValueError:
            return None
        i += 1 if eq else 2
    return values


def _run_root(values: dict[str, Any], args: list[str], state: AppState) -> int:
    """What the app's root does with these values (`-p`: one task, else the REPL), and what Typer does with what
    escapes a one-shot run."""
    prompt, continue_, resume = values.pop("prompt", None), values.pop("continue_", False), values.pop("resume", None)
    if values.pop("require_verified", None):
        values["verify"] = "required"
    state.flags = flags_given(**values)
    session = resume_from(continue_, resume)
    if prompt is None:
        onboard = not any(key in values for key in ("model", "api_base", "api_key"))
        return run_interactive(state, session, onboard=onboard)
    from cli_agent.cli.oneshot import run_prompt  # deferred: the agent's stack, which the REPL loads behind its prompt

    try:
        return run_prompt(state, prompt, session)
    except EOFError:
        sys.stderr.write("\n")
        return _fail("interrupted", 130, _wants_json(args, state))
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        raise SystemExit(1) from None


def _run_app(args: list[str], state: AppState) -> int:
    from cli_agent.cli.app import app  # deferred: Typer's app, only for what the plain parser leaves

    result = app(args=args, obj=state, standalone_mode=False, prog_name="cli-agent")
    return result if isinstance(result, int) else 0


def _typer_outcome(exc: Exception, args: list[str], state: AppState) -> int | None:
    """The exit code of Typer's own exceptions (only the app raises them), else None."""
    typer = sys.modules.get("typer")  # only the app raises them, and it has imported Typer: never imported here
    if typer is None:
        return None
    if isinstance(exc, typer.Exit):
        return int(exc.exit_code or 0)
    if isinstance(exc, typer.Abort):
        return _fail("interrupted", 130, _wants_json(args, state))
    if isinstance(exc, typer.TyperException):  # a bad flag or argument, as click reports it
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return _fail(f"usage error: {message} (see cli-agent --help)", 2, _wants_json(args, state))
    return None


# -- errors to exit codes, in one place ---------------------------------------------------------------------------

def _on_sigterm(signum: int, frame: Any) -> None:
    raise errors.TerminateSignal()


def _wants_json(argv: list[str], state: AppState) -> bool:
    """`--output json` was asked for: by the settings once loaded, else by the arguments or the environment (a
    config that failed to load can't say)."""
    if state.output is not None:
        return state.output == "json"
    for i, arg in enumerate(argv):
        if (arg in ("-o", "--output") and argv[i + 1:i + 2] == ["json"]) or arg in ("--output=json", "-ojson"):
            return True
    return os.environ.get("CLI_AGENT_OUTPUT", "").strip() == "json"


def _json_failure(message: str, code: int) -> None:
    """The `--output json` object of a run that ended before it could report itself."""
    status = next((r.value for r in StopReason if r.exit_code == code and r is not StopReason.CANCELLED), "error")
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "cost_usd": 0.0, "cached_tokens": 0,
             "cache_write_tokens": 0, "evaluated_tokens": 0}  # Usage().to_dict()'s keys
    report = {"status": status, "exit_code": code, "message": message, "answer": "", "steps": 0, "tool_calls": [],
              "files_changed": [], "usage": usage, "trace": None, "warnings": [], "notes": []}
    sys.stdout.write(json_for_output(report) + "\n")


def _fail(message: str, code: int, json_report: bool = False) -> int:
    if json_report:
        _json_failure(message, code)
    sys.stdout.flush()
    sys.stderr.write(_on_stderr(f"cli-agent: {escape_for_terminal(message)}") + "\n")
    sys.stderr.flush()
    return code


def _on_stderr(line: str) -> str:
    """`line` as it goes to stderr: whole for a pipe or a file (a script reads the last line), and on a terminal
    wrapped between words to its width, continuation lines under the message (after `cli-agent: `)."""
    try:
        if not sys.stderr.isatty():
            return line
        width = os.get_terminal_size(sys.stderr.fileno()).columns - 1
    except (AttributeError, OSError, ValueError):
        return line

    indent = " " * len("cli-agent: ")
    return "\n".join(textwrap.fill(part, max(width, 30), subsequent_indent=indent, break_long_words=False,
                                   break_on_hyphens=False) or part for part in line.split("\n"))


def run(argv: list[str] | None = None, *, provider_factory: Any = None) -> int:
    """Run the CLI and return its exit code (errors.py's table). The last stderr line says why it failed."""
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    state = AppState(provider_factory=provider_factory)
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        values = root_flags(args)
        return _run_app(args, state) if values is None else _run_root(values, args, state)
    except errors.CliAgentError as exc:
        return _fail(str(exc), exc.exit_code, not exc.reported and _wants_json(args, state))
    except KeyboardInterrupt:
        return _fail("interrupted (Ctrl-C)", 130, _wants_json(args, state))
    except errors.TerminateSignal:
        return _fail("terminated (SIGTERM)", 143, _wants_json(args, state))
    except BrokenPipeError:
        return 1
    except Exception as exc:  # never a traceback to the user
        code = _typer_outcome(exc, args, state)
        if code is not None:
            return code
        return _fail(f"internal error: {type(exc).__name__}: {exc}", 1, _wants_json(args, state))
    finally:
        signal.signal(signal.SIGTERM, previous)


def main() -> None:
    exit_now(run())


def exit_now(code: int) -> None:
    """End the process with `code` as `sys.exit` would, without the interpreter's teardown (freeing every module
    and object: ~50 ms of a one-shot run, a sixth of it). The `atexit` functions run (temporary folders are removed
    by them) and output is flushed. The process ends the usual way while a thread that is not a daemon still runs
    (the usual way waits for it) and under a profiler or a tracer (coverage, a debugger: they report on the way out)."""
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(not t.daemon for t in others) or sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing more can be said on it
            stream.flush()
    os._exit(code)
