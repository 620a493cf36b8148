"""Invoking workflows: their arguments, and their steps in one session.

    values, missing = parse_arguments(workflow, "src/a.py goal='make it fast'", workspace)
    values |= ask_missing(workflow, missing, ask, workspace)    # ask(param, problem) -> str; Ctrl-C propagates
    for event in run_workflow(session, workflow, values, approve): ...
    complete_arguments(workflow, "src/a.py go")                  # tab candidates for the last word

`parse_arguments` splits like a shell; a word is `key=value` when `key` is a parameter, else positional (filled in
declared order; extra words join the last positional parameter when it is a string). Bad values raise
errors.WorkflowError naming each problem and the usage line; required parameters without a value come back in `missing`.

`run_workflow` yields the events of every step: a prompt step is one run of the agent loop (the conversation
carries over from step to step), a tool step one fixed call through the same dispatcher and approval
(`Session.run_call`: a turn of its own in the undo journal). Each step ends with its own RunFinished; the first
that is not "done" ends the workflow, so the last RunFinished is the workflow's result.

The front ends build on these: `ui/workflow_commands.py` makes each workflow a `/NAME ARGS` command in the REPL,
`ui/oneshot.py` runs `cli-agent workflow run NAME [ARGS...]`, and `ui/listing.py` prints `cli-agent workflows`
(`render_catalog`).
"""

from __future__ import annotations

import json
import shlex
import textwrap
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import EventStream, RunFinished, StopReason, ToolCall, errors
from cli_agent.workflows.files import PLACEHOLDER, Catalog, Param, PromptStep, Value, Workflow

if TYPE_CHECKING:
    from cli_agent.agent import Approver
    from cli_agent.session import Session

__all__ = [
    "ask_missing", "complete_arguments", "missing_message", "parse_arguments", "parse_tokens", "render_catalog",
    "run_workflow",
]

MAX_ASKS = 5  # answers ask_missing takes for one parameter before giving up


# -- templates and arguments -------------------------------------------------------------------------------------

def render(value: Any, values: dict[str, Value]) -> Any:
    """`value` with every `{{param}}` filled in. A string that is exactly one placeholder becomes the typed value
    (None for an optional parameter left out); inside text, a value left out is empty and a bool is true/false."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value)
        if whole is not None:
            return values.get(whole.group(1).strip())
        return PLACEHOLDER.sub(lambda m: _text(values.get(m.group(1).strip())), value)
    if isinstance(value, list | tuple):
        return [render(v, values) for v in value]
    if isinstance(value, dict):
        out = {k: render(v, values) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None}
    return value


def _text(value: Value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- arguments ----------------------------------------------------------------------------------------------------

def parse_arguments(workflow: Workflow, text: str, workspace: Any) -> tuple[dict[str, Value], list[Param]]:
    """The REPL's `/name ARGS` text, split like a shell; see `parse_tokens`."""
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise errors.WorkflowError(f"{workflow.name}: cannot split the arguments: {exc}") from None
    return parse_tokens(workflow, tokens, workspace)


def parse_tokens(workflow: Workflow, tokens: Sequence[str], workspace: Any) -> tuple[dict[str, Value], list[Param]]:
    """(values of every parameter, given or default; required parameters still without one). A bad value raises
    errors.WorkflowError listing every problem and the usage line."""
    given: dict[str, str] = {}
    positional: list[str] = []
    problems: list[str] = []
    for token in tokens:
        key, eq, value = token.partition("=")
        if eq and workflow.param(key) is not None:
            if key in given:
                problems.append(f"{key}: given twice")
            given[key] = value
        else:
            positional.append(token)
    slots = [p for p in workflow.params if p.name not in given]
    if len(positional) > len(slots):
        if slots and slots[-1].type == "string":
            keep = len(slots) - 1
            positional = [*positional[:keep], " ".join(positional[keep:])]
        else:
            problems.append(f"too many arguments ({len(positional)} words for {len(slots)} parameter(s))")
    given |= {p.name: word for p, word in zip(slots, positional, strict=False)}
    values: dict[str, Value] = {}
    missing: list[Param] = []
    for param in workflow.params:
        try:
            if param.name in given:
                values[param.name] = param.convert(given[param.name], workspace)
            elif param.default is not None:
                default = param.default
                values[param.name] = param.convert(str(default), workspace) if param.type == "path" else default
            else:
                values[param.name] = None
                if param.required:
                    missing.append(param)
        except errors.WorkflowError as exc:
            problems.append(str(exc))
    if problems:
        raise errors.WorkflowError(f"{workflow.name}: {'; '.join(problems)} (usage: {workflow.usage})")
    return values, missing


def missing_message(workflow: Workflow, missing: Sequence[Param]) -> str:
    listed = "; ".join(p.describe() for p in missing)
    return f"{workflow.name}: missing parameter(s): {listed} (usage: {workflow.usage})"


def ask_missing(workflow: Workflow, missing: Sequence[Param], ask: Callable[[Param, str | None], str],
                workspace: Any) -> dict[str, Value]:
    """Ask for each missing parameter until its answer is valid: `ask(param, problem)` gets the previous answer's
    problem (None the first time). Ctrl-C in `ask` propagates, so nothing runs."""
    values: dict[str, Value] = {}
    for param in missing:
        problem: str | None = None
        for _ in range(MAX_ASKS):
            answer = ask(param, problem)
            if not answer.strip():
                problem = f"{param.name} is required"
                continue
            try:
                values[param.name] = param.convert(answer, workspace)
                break
            except errors.WorkflowError as exc:
                problem = str(exc)
        else:
            raise errors.WorkflowError(f"{workflow.name}: no valid value for {param.describe()}: {problem}")
    return values


def complete_arguments(workflow: Workflow, text: str,
                       paths: Callable[[str], list[str]] | None = None) -> list[str]:
    """Tab candidates for the word being typed at the end of `text` (the arguments so far): `name=` for each
    parameter not given yet, and the choices (or yes/no) of the parameter the word fills, or for a path parameter
    the workspace paths `paths(fragment)` matches."""
    words = text.split(" ")
    done, word = words[:-1], words[-1]
    given = {w.partition("=")[0] for w in done if "=" in w}
    key, eq, partial = word.partition("=")
    if eq:
        param = workflow.param(key)
        return [f"{key}={c}" for c in _choices(param, paths, partial)] if param else []
    free = [p for p in workflow.params if p.name not in given]
    positional = len([w for w in done if w and "=" not in w])
    rest = free[positional:]  # the parameters positional words have not filled yet
    out = list(_choices(rest[0] if rest else None, paths, word))
    return out + [f"{p.name}=" for p in rest if p.name.startswith(word)]


def _choices(param: Param | None, paths: Callable[[str], list[str]] | None, partial: str) -> list[str]:
    """The values of `param` that start with `partial` (a path parameter: the paths `paths` matches)."""
    if param is None:
        return []
    if param.type == "path":
        return [p for p in paths(partial) if " " not in p] if paths is not None else []
    words = param.choices if param.type == "choice" else ("yes", "no") if param.type == "bool" else ()
    return [w for w in words if w.startswith(partial)]


# -- running ------------------------------------------------------------------------------------------------------

def run_workflow(session: Session, workflow: Workflow, values: dict[str, Value],
                 approve: Approver | None, *, command: str = "") -> EventStream:
    """Every step's events, stopping after the first step that does not finish "done"; returns the last step's
    RunFinished, the workflow's result. `command`: what the user typed (`/refactor calc.py`), kept by each step's
    run as what was asked (a later step's with its number)."""
    absent = [p for p in workflow.params if p.required and values.get(p.name) is None]
    if absent:
        raise errors.WorkflowError(missing_message(workflow, absent))
    finished: RunFinished | None = None
    for index, step in enumerate(workflow.steps, 1):
        typed = command if index == 1 or not command else f"{command} (step {index})"
        if isinstance(step, PromptStep):
            events = session.run(render(step.prompt, values), approve, only_tools=step.tools, command=typed)
        else:
            arguments = render(step.arguments, values)
            call = ToolCall(f"workflow_{workflow.name}_{index}_{uuid.uuid4().hex[:8]}", step.tool, arguments,
                            json.dumps(arguments, ensure_ascii=False))
            events = session.run_call(call, approve, command=typed)  # its own turn in the undo journal
        finished = yield from events  # forwards a thrown Ctrl-C and a sent decision to the run
        if finished is None or finished.stop_reason is not StopReason.DONE:
            break
    return finished


def render_catalog(catalog: Catalog, width: int | None = None) -> str:
    """The catalog as text: by category, each workflow with its usage, parameters, file and what it shadows;
    `width`: each line wrapped between words to it, under its own indent."""
    lines: list[str] = []
    for category, workflows in catalog.by_category().items():
        lines.append(f"{category}:")
        for wf in workflows:
            lines.append(f"  {wf.usage}")
            lines.append(f"      {wf.title}: {wf.description}")
            lines.extend(f"      - {p.describe()}" for p in wf.params)
            lines.append(f"      from {wf.source}: {wf.path}")
            lines.extend(f"      shadows {path}" for path in wf.shadows)
        lines.append("")
    lines.extend(f"note: {note}" for note in catalog.notes)
    if width is not None:
        lines = [_wrapped(line, width) for line in lines]
    return "\n".join(lines).rstrip("\n")


def _wrapped(line: str, width: int) -> str:
    indent = " " * (len(line) - len(line.lstrip(" ")))
    return textwrap.fill(line, max(width, 20), subsequent_indent=indent + "  ", break_long_words=False,
                         break_on_hyphens=False) if line.strip() else line
