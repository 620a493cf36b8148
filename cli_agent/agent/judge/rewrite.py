"""Whole-definition candidates: the model rewrites the functions a task is about, as plain code, and the tests judge.

A small model fails an agent loop less on what to change than on how: code inside a JSON string (quotes, escapes),
an `old` to copy exactly, line numbers to keep. This candidate asks for none of that. It shows the model the
definitions the task brief found (`prompt.task_files`, the same ones the agent saw), as plain source, and asks for
one fenced Python block with the new version of each function or class it changes or adds. Then the harness:
- replaces each definition the reply names by name (`replace_definition`, which re-indents and checks the parse);
- puts a new method (its first parameter `self` or `cls`) at the end of the class the brief outlined, and a new
  function after the last module-level definition shown;
- runs the project's tests (`repair.verify`), as after any run.
Each request and its reply are events like the loop's (`ModelRequest`, `AssistantMessage`), sent through the same
retry path (`model_call.exchange`), so the trace shows what the candidate asked and got.
A rewrite that places nothing, changes nothing or fails the tests is undone, and the model is asked again, up to
`SAMPLES` times while the candidate's time lasts, shown its earlier wrong versions with what each did
(`rewrite_memory`); a rewrite the same as an earlier one once parsed is not tested again (the trace shows it as a
"repeat"), and the next is sampled further from the last. After a few failed rewrites of one place, the next
ranked definition is asked for: a function the ones tried call, in their file or another of the package
(`rewrite_targets`).

Every change goes through the same dispatcher and approval as a model's call (in a candidate's copy, all are
approved). A task whose brief shows no Python definition (or with `task_files = false`) has nothing to rewrite:
that candidate runs the agent loop instead.
"""

from __future__ import annotations

import ast
import hashlib
import re
import textwrap
from collections.abc import Collection, Generator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.agent.judge.attempts import revert
from cli_agent.agent.judge.module_names import (
    alias_of,
    assignable,
    assignment_calls,
    exports,
    in_order,
    public_files,
    renamed_in_all,
    renamed_uses,
    rewrite_call,
    shown_all,
)
from cli_agent.agent.judge.proof.statements import renames
from cli_agent.agent.judge.repair import verify
from cli_agent.agent.judge.rewrite_memory import Pace, outcome
from cli_agent.agent.judge.rewrite_reply import reply_code, tree_of
from cli_agent.agent.judge.rewrite_targets import Targets, fixed_names
from cli_agent.agent.judge.task_examples import added_names
from cli_agent.agent.model_call import exchange
from cli_agent.contracts import (
    Decision,
    Envelope,
    Event,
    Message,
    RunFinished,
    StopReason,
    ToolCall,
    Verification,
    errors,
)
from cli_agent.prompt import Place, task_brief
from cli_agent.providers import ProviderRequest

if TYPE_CHECKING:
    from cli_agent.agent.approval_flow import Approvals
    from cli_agent.agent.judge.bench import Bench
    from cli_agent.agent.run_state import AgentSetup, RunState
    from cli_agent.fs import Workspace

SYSTEM = ("You fix Python code. You get a task and the code it is about; the code does not do what the task asks "
          "yet. Think about which line is wrong, then reply with one ```python block that holds the complete new "
          "version of each function or class you change or add. Keep their names; leave out the ones you do not "
          "change.")
MAX_REPLY_TOKENS = 640  # a whole function without its docstring; a reply running on is cut here
FAILING_CHARS = 1500  # the most of the checks failing before any change that a rewrite request shows
OUTLINE_METHODS = 12  # of a long class's methods, the most a rewrite request names
UNCHANGED = ("(A version the same as the code above changes nothing, and the code above does not do what the task "
             "asks: yours must differ from it.)")  # added to the request once a rewrite changed nothing
SAMPLES = 20  # rewrites one candidate asks for, while its time lasts, until one lands and passes
FINGERPRINT = hashlib.sha256(f"rewrite:{SYSTEM}:{MAX_REPLY_TOKENS}".encode()).hexdigest()  # a rewrite request's plan
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def places_for(prompt: str, workspace: Workspace) -> list[Place]:
    """The Python definitions the task brief shows for `prompt` (none: there is nothing to rewrite)."""
    brief = task_brief(prompt, workspace)
    return [p for p in brief.places if p.path.endswith((".py", ".pyi"))] if brief is not None else []


def candidate(b: Bench, run: RunState, places: Sequence[Place],
              temperature: float) -> Generator[Event, Decision | None, RunFinished]:
    """One whole-definition candidate for the run's task in the session's workspace (a candidate's copy), its
    rewrites going through the ranked definitions in turn (`rewrite_targets`)."""
    s, talk, verifier, prompt = b.setup, b.talk, b.judging.verifier, run.task
    workspace = s.dispatcher.ctx.workspace
    failing, pace = "", Pace(verifier.command if verifier else None)  # the tests' pace bounds a rewrite's check
    if verifier is not None and not added_names(prompt):  # what fails before any change, shown with the code
        began = s.clock()  # (not for a task that adds a name: "not defined" misleads)
        before = yield from verify(run, verifier)
        pace.took(s.clock() - began, before)
        failing = "" if before.passed or not before.ran else before.failures  # could not run: nothing to show
    renamed = renames(prompt)
    tables = assignable(prompt, bool(added_names(prompt) or renamed))  # the module-level names a rewrite may replace
    targets = Targets(places, workspace, search=not added_names(prompt) and not renamed, fixed=fixed_names(prompt))
    sources, ask = _asked(b, run, targets, failing, renamed)
    why = "no rewrite yet"
    unchanged = False
    for sample in range(1, SAMPLES + 1):
        remaining = run.deadline - s.clock()
        if remaining <= 1:
            break
        if sample > 1 and targets.failed():  # the next ranked definition, not the same wrong place again
            sources, ask = _asked(b, run, targets, failing, renamed)
            unchanged = False
        memory = targets.memory
        asking = Message("user", "\n\n".join(part for part in (ask.content, UNCHANGED if unchanged else "",
                                                                 memory.shown()) if part))
        request = ProviderRequest(messages=(Message("system", SYSTEM), asking), timeout_s=remaining,
                                  options={**memory.sampling(temperature), "max_tokens": MAX_REPLY_TOKENS})
        run.steps += 1
        try:  # the loop's request path: its events, retries and usage
            reply = yield from exchange(s, run, request, fingerprint=FINGERPRINT, messages=len(request.messages),
                                        stream_text=False)
        except errors.RunTimeoutError:
            return talk.stop(run, StopReason.TIMEOUT, f"{why}; the time ran out during rewrite {sample}")
        except errors.CliAgentError as exc:
            return talk.stop(run, StopReason.ERROR, f"the rewrite request failed: {exc}")
        text = reply.text
        talk.append(run, Message("assistant", text))
        code = reply_code(text)
        earlier = memory.repeat_of(code) if code is not None else None
        if earlier is not None:
            why = f"rewrite {sample} repeats rewrite {earlier.number}"
            yield Verification(command=f"rewrite {sample}", round=run.verify_round, phase="repeat",
                               summary=f"the same code as rewrite {earlier.number}, not tested again")
            continue
        calls = planned_calls(code, targets.placed, sources, renamed, tables) if code is not None else []
        calls = in_order([*calls, *exports(calls, sources, prompt)])  # imported by its package, listed in __all__
        if not calls:
            why = f"rewrite {sample} held no definition that could be placed"
            continue
        assert code is not None  # calls come from code
        failures = yield from _applied(s, run, calls, b.approvals)
        if not run.changed:
            why = f"no definition of rewrite {sample} landed: " + "; ".join(failures)
            memory.note(sample, code, "it changed nothing")
            unchanged = True
            continue
        if verifier is None:
            return talk.done(run, "done: the rewrite landed (no tests to judge it)", "")
        began = s.clock()
        verdict = yield from verify(run, verifier, until=pace.deadline(began, run.deadline))
        pace.took(s.clock() - began, verdict)
        if verdict.passed or not verdict.ran:
            return _judged(talk.done(run, f"done: rewrite {sample} passes the tests", ""),
                           True if verdict.ran else None, verdict.summary)
        why = f"rewrite {sample} fails the tests: {verdict.summary}"
        memory.note(sample, code, outcome(verdict))
        revert(Path(workspace.root), run.applied)  # the next sample starts from the files as they were
        run.applied.clear()
        run.changed.clear()
    return talk.stop(run, StopReason.CHANGE_FAILED if run.steps else StopReason.TIMEOUT,
                     why if run.steps else "no time left for a rewrite")


def _asked(b: Bench, run: RunState, targets: Targets, failing: str, renamed: dict[str, str]
           ) -> tuple[dict[str, str], Message]:
    """The sources of the current target's files (and their packages' `__init__.py`), noted as shown to the model as
    they are now (their definitions may be replaced), and the rewrite request for it, added to the conversation."""
    workspace, places = b.setup.dispatcher.ctx.workspace, targets.places
    files = public_files([p.path for p in targets.placed])  # the files of the places, and their __init__.py
    data = {path: workspace.read_bytes(path) for path in files if path in {p.path for p in targets.placed}
            or (Path(workspace.root) / path).is_file()}
    for path, raw in data.items():
        if b.setup.dispatcher.ctx.seen is not None:
            b.setup.dispatcher.ctx.seen.note(path, raw)
    sources = {path: raw.decode("utf-8", errors="replace") for path, raw in data.items()}
    names = shown_all(sources) if added_names(run.task) or renamed else []
    ask = Message("user", "\n\n".join(part for part in (_request(run.task, places, sources, failing, names),
                                                          targets.note()) if part))
    b.talk.append(run, ask)
    return sources, ask


def _applied(s: AgentSetup, run: RunState, calls: Sequence[ToolCall], approvals: Approvals
             ) -> Generator[Event, Decision | None, list[str]]:
    """Make the calls (through approval, as a model's calls), noting what they changed; the failures."""
    failures = []
    for index, call in enumerate(calls, 1):
        dispatcher = s.dispatcher.unchecked_reads().at(run.deadline)
        prepared, reason = yield from approvals.settle(run, dispatcher.prepare(call), index, len(calls), None,
                                                       dispatcher)
        envelope = Envelope.failure("denied: " + reason) if reason else dispatcher.execute(prepared)
        result = prepared.result(envelope)
        yield result
        if not envelope.ok:
            failures.append(f"{call.name} {(call.arguments or {}).get('name', '')}: {'; '.join(envelope.errors)}")
        run.record(result)
    return failures


def _judged(finished: RunFinished, verified: bool | None, tests: str) -> RunFinished:
    return replace(finished, verified=verified, tests=tests,
                   stop_reason=StopReason.DONE if verified is not False else StopReason.TESTS_FAILED)


def _request(prompt: str, places: Sequence[Place], sources: dict[str, str], failing: str = "",
             names: Sequence[str] = ()) -> str:
    """The task, then each definition shown as plain source, dedented, its docstring left out (it is kept as it is
    when the new version has none: a small model copying it spends most of its reply there), the modules'
    `__all__` (`names`, for a task that adds or renames a name), then what fails now (its first `FAILING_CHARS`)."""
    parts = [prompt, "", "The code it is about (docstrings left out):"]
    for place in places:
        node = _node(sources[place.path], place)
        if node is None:
            continue
        lines = sources[place.path].split("\n")
        if place.whole:
            doc = _docstring_lines(node)
            shown = [row for n, row in enumerate(lines[place.first - 1:place.last], place.first) if n not in doc]
        else:  # a long class: its head and some of its methods' def lines
            shown = [lines[node.lineno - 1]] + [f"{lines[n.lineno - 1]} ..." for n in _outlined(node, prompt)]
        parts.append(f"```python\n# {place.path}\n{textwrap.dedent(chr(10).join(shown))}\n```")
    if names:
        parts += ["", "The module's `__all__` (reply with its new version too if the name must be listed):", *names]
    if failing.strip():
        parts += ["", "What fails with this code now:", f"```\n{failing.strip()[:FAILING_CHARS]}\n```"]
    added = added_names(prompt)
    if added:  # a small model shown an outline writes the whole class again: say what to write
        parts += ["", f"Reply with the complete new {' and '.join(f'`{n}`' for n in added)} only, in one ```python "
                      "block; do not repeat the code above."]
    return "\n".join(parts)


def _outlined(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, prompt: str
              ) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The methods of a long class a rewrite request names, at most `OUTLINE_METHODS`, in the class's order:
    `__init__`, those the task's words name, then the first others. A small model shown all of them copies them."""
    methods = [n for n in node.body if isinstance(n, _DEFINITIONS[:2])]
    words = set(re.findall(r"[a-z_][a-z0-9_]*", prompt.lower()))
    rank = sorted(range(len(methods)), key=lambda i: (methods[i].name != "__init__",
                                                      not (set(methods[i].name.strip("_").split("_")) & words), i))
    return [methods[i] for i in sorted(rank[:OUTLINE_METHODS])]


def _node(source: str, place: Place) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The definition `place` names in `source`."""
    tree = tree_of(source)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, _DEFINITIONS) and node.name == place.name and (
                min([node.lineno, *(d.lineno for d in node.decorator_list)]) == place.first):
            return node
    return None


def _docstring_lines(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> range:
    """The 1-based lines of the definition's docstring (an empty range when it has none)."""
    first = node.body[0] if node.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return range(first.lineno, (first.end_lineno or first.lineno) + 1)
    return range(0)


def planned_calls(code: str, places: Sequence[Place], sources: dict[str, str],
                  renamed: dict[str, str] | None = None, tables: Collection[str] | None = None) -> list[ToolCall]:
    """The tool calls that put each definition of `code` where it belongs (see the module's docstring). A class in
    the reply that is not itself shown stands for its methods (a model often wraps the method it was shown), and
    `name = other` for a function shown replaces it (the alias a rename leaves); a definition under the new name of
    a rename (`renamed`: new -> old) replaces the old one; an assignment of a module-level name replaces it
    (`module_names`), when `tables` (None: any) holds the name. Line-based calls come first, the lowest in the
    file first, so that the line numbers they were planned with still hold."""
    tree = tree_of(code)  # parsed once with `reply_code`
    if tree is None:
        return []
    lines = code.split("\n")
    calls: list[ToolCall] = []
    shown = {p.name: p for p in places if p.whole}
    aliases: set[str] = set()
    for node in tree.body:
        alias = alias_of(node)
        if alias is not None and alias in shown:
            place = shown[alias]
            aliases.add(alias)
            calls.append(rewrite_call("replace_definition", path=place.path, name=place.name, new=ast.unparse(node)))
        if not isinstance(node, _DEFINITIONS):
            continue
        inner = node.body if isinstance(node, ast.ClassDef) and not _is_shown(node, places) else [node]
        for each in inner:
            if isinstance(each, _DEFINITIONS) and not _stub(each):
                call = _placed(each, _segment(each, lines), places, sources, renamed or {})
                if call is not None:
                    calls.append(call)
    calls += assignment_calls(code, sources, aliases, tables)
    for call in [c for c in calls if c.name == "replace_definition"]:  # a rename landing: __all__ follows it
        a = call.arguments or {}
        new = next((n for n, old in (renamed or {}).items() if old == a.get("name")), None)
        if new and not any(c.name == "replace_lines" and (c.arguments or {}).get("path") == a["path"] for c in calls):
            listed = renamed_in_all(a["path"], sources[a["path"]], a["name"], new)
            calls += [listed] if listed is not None else []
        was = next((p for p in places if (p.path, p.name) == (a["path"], a["name"])), None) if new else None
        if new and was is not None:  # and so do the module's other uses of the old name
            calls += renamed_uses(a["path"], sources[a["path"]], a["name"], new, was, calls)
    return in_order(calls)


def _is_shown(node: ast.ClassDef, places: Sequence[Place]) -> bool:
    """Whether the class itself is to be placed: it was shown whole, or it is new (it holds no method to place
    on its own). A class shown as an outline stands for the methods the reply gives it."""
    if any(p.name == node.name for p in places):
        return any(p.name == node.name and p.whole for p in places)
    return not any(isinstance(n, _DEFINITIONS) for n in node.body)


def _segment(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, lines: list[str]) -> str:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return textwrap.dedent("\n".join(lines[first - 1:node.end_lineno or node.lineno]))


def _placed(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, segment: str, places: Sequence[Place],
            sources: dict[str, str], renamed: dict[str, str]) -> ToolCall | None:
    same = [p for p in places if p.name == node.name] or [p for p in places if p.name == renamed.get(node.name)]
    if _is_method(node):  # a method never replaces a module-level function of the same name (another file's)
        same = [p for p in same if _column(sources[p.path], p) > 0]
    if same:
        return rewrite_call("replace_definition", path=same[0].path, name=same[0].name,
                     new=_documented(segment, sources[same[0].path], same[0]))
    classes = [p for p in places if not p.whole]
    if classes and _is_method(node):
        into = classes[0]
        if node.name in _method_names(sources[into.path], into):
            return None  # a method of the outline, not shown whole: a copy of its def line, not a change
        indent = _indent_of_body(sources[into.path], into)
        text = "\n" + textwrap.indent(segment, indent, lambda line: bool(line.strip()))
        return rewrite_call("insert_text", path=into.path, text=text, after_line=into.last)
    module_level = [p for p in places if p.whole and _column(sources[p.path], p) == 0]
    if module_level and not _is_method(node):
        after = module_level[-1]
        return rewrite_call("insert_text", path=after.path, text="\n\n" + segment, after_line=after.last)
    return None


def _documented(segment: str, source: str, place: Place) -> str:
    """`segment` (a new version of the definition at `place`) with the original's docstring, when it has none."""
    original = _node(source, place)
    try:
        new = ast.parse(segment).body[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError):
        return segment
    if original is None or not isinstance(new, _DEFINITIONS) or not new.body or _docstring_lines(new):
        return segment
    doc = _docstring_lines(original)
    if not doc:
        return segment
    original_rows = source.split("\n")[doc.start - 1:doc.stop - 1]
    had = _indent(original_rows[0])  # the original body's indentation, moved to the new body's
    rows = segment.split("\n")
    at = new.body[0].lineno - 1  # the first statement of the new body
    has = _indent(rows[at])
    docstring = [has + row[len(had):] if row.startswith(had) else row for row in original_rows]
    return "\n".join(rows[:at] + docstring + rows[at:])


def _stub(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """A function whose body is only `...`, `pass` or a docstring: an outline line copied, nothing to place."""
    return not isinstance(node, ast.ClassDef) and all(
        isinstance(n, ast.Pass) or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) for n in node.body)


def _method_names(source: str, place: Place) -> set[str]:
    node = _node(source, place)
    return {n.name for n in node.body if isinstance(n, _DEFINITIONS[:2])} if isinstance(node, ast.ClassDef) else set()


def _is_method(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    params = node.args.posonlyargs + node.args.args
    return bool(params) and params[0].arg in ("self", "cls")


def _indent(row: str) -> str:
    return row[:len(row) - len(row.lstrip())]


def _column(source: str, place: Place) -> int:
    return len(_indent(source.split("\n")[place.first - 1]))


def _indent_of_body(source: str, place: Place) -> str:
    for line in source.split("\n")[place.first:place.last]:
        if line.strip() and not line.lstrip().startswith(("#", '"""', "'''")):
            return _indent(line)
    return " " * (_column(source, place) + 4)
