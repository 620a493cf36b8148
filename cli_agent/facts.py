"""Project facts and locks: `.cli-agent/facts.toml` (committed) and `.cli-agent/facts.draft.toml` (proposals).

    store = FactStore(workspace_root)
    proposal = store.propose("Tests use pytest.", "the user said so")   # the model's only way in (propose_fact)
    store.pending(), store.committed(), store.locks()
    store.commit(proposal.id, author="alice")                           # the user's, never a model tool
    store.reject("f4")

`facts.toml` holds `[[facts]]` tables (id, text, author, time) and `[locks] paths = [globs]`; the user may edit it
by hand (a commit appends its table, so comments and layout survive). The draft holds `[[proposals]]` (id, text,
reason, time, proposed_by) and is written only by this module. Both are written atomically (a temporary file in
the same folder, fsync, rename) under an advisory lock on the `.cli-agent` folder, and a missing file is empty. A
broken file raises ConfigError naming the file and the line. The paths are fixed: nothing here takes a path from
the model, which is why the store may write below `.cli-agent/`, a folder the model's file tools can't change.

`workspace_for(settings)` opens the sandbox with every lock: config `locks`, facts.toml's `[locks] paths`, and the
user's config file when it lies inside the workspace.
"""

from __future__ import annotations

import contextlib
import os
import re
import tomllib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, field_validator

from cli_agent.errors import ConfigError, UsageError
from cli_agent.paths import PROJECT_DIR

if TYPE_CHECKING:
    from cli_agent.change import Change
    from cli_agent.config import Settings
    from cli_agent.sandbox import Workspace
    from cli_agent.ui.commands import CommandContext, CommandRegistry

__all__ = ["DRAFT_FILE", "FACTS_FILE", "Fact", "FactStore", "Proposal", "workspace_for"]

FACTS_FILE = "facts.toml"
DRAFT_FILE = "facts.draft.toml"
MAX_TEXT = 1000  # characters of a fact
MAX_REASON = 2000
MAX_PENDING = 100  # proposals waiting at once: a looping model can't bury the user

_FACTS_HEADER = ("# Project facts for cli-agent: the model reads them as authoritative and can only propose new ones.\n"
                 "# `cli-agent facts` lists them; `cli-agent facts commit ID | reject ID` decides on proposals.\n"
                 "# [locks] paths: globs (.gitignore syntax) the agent may never change. Edit this file freely.\n")
_DRAFT_HEADER = ("# Facts proposed by the model, waiting for the user: `cli-agent facts commit ID` or `reject ID`.\n"
                 "# Written by cli-agent; committed facts live in facts.toml.\n")


def _time_text(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Fact(_Model):
    """A committed fact. `id` and `author`/`time` may be left out of a hand-written one."""

    id: StrictStr = ""
    text: StrictStr = Field(min_length=1)
    author: StrictStr = ""
    time: StrictStr = ""

    _time = field_validator("time", mode="before")(_time_text)


class Proposal(_Model):
    id: StrictStr = Field(min_length=1)
    text: StrictStr = Field(min_length=1)
    reason: StrictStr = ""
    time: StrictStr = ""
    proposed_by: StrictStr = "model"

    _time = field_validator("time", mode="before")(_time_text)


class _Locks(_Model):
    paths: list[StrictStr] = Field(default_factory=list)

    @field_validator("paths")
    @classmethod
    def _not_blank(cls, paths: list[str]) -> list[str]:
        if any(not p.strip() for p in paths):
            raise ValueError("a lock must be a non-empty glob")
        return paths


class _FactsFile(_Model):
    facts: list[Fact] = Field(default_factory=list)
    locks: _Locks = Field(default_factory=_Locks)


class _DraftFile(_Model):
    next_id: int = Field(default=1, ge=1)
    proposals: list[Proposal] = Field(default_factory=list)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class FactStore:
    """The facts, proposals and locks of one workspace. Every call reads the files afresh (they are small)."""

    def __init__(self, workspace_root: str | Path, *, clock: Callable[[], str] = _now) -> None:
        self.root = Path(workspace_root)
        self.folder = self.root / PROJECT_DIR
        self.facts_path = self.folder / FACTS_FILE
        self.draft_path = self.folder / DRAFT_FILE
        self._clock = clock

    # -- reading -----------------------------------------------------------------------------------------------

    def committed(self) -> list[Fact]:
        facts = self._facts().facts
        return [f if f.id else f.model_copy(update={"id": str(n)}) for n, f in enumerate(facts, 1)]

    def pending(self) -> list[Proposal]:
        return list(self._draft().proposals)

    def locks(self) -> tuple[str, ...]:
        return tuple(self._facts().locks.paths)

    def get(self, fact_id: str) -> Proposal:
        """The pending proposal `fact_id` (`f3`, or just `3`); UsageError listing the pending IDs if none."""
        return self._find(self.pending(), fact_id)

    # -- changing ------------------------------------------------------------------------------------------------

    def propose(self, text: str, reason: str, *, proposed_by: str = "model") -> Proposal:
        """Record a proposal in the draft and return it; the same text again returns the earlier proposal (or the
        committed fact, as a Proposal with proposed_by="committed")."""
        text, reason = _clean(text), _clean(reason)
        if not text:
            raise UsageError("the fact is empty: say it in one sentence")
        if len(text) > MAX_TEXT:
            raise UsageError(f"the fact is {len(text)} characters long; keep it under {MAX_TEXT}, one sentence")
        if len(reason) > MAX_REASON:
            raise UsageError(f"the reason is {len(reason)} characters long; keep it under {MAX_REASON}")
        with self._locked(create=True) as dir_fd:
            key = text.casefold()
            for fact in self.committed():
                if " ".join(fact.text.split()).casefold() == key:
                    return Proposal(id=fact.id, text=fact.text, reason=reason, time=fact.time,
                                    proposed_by="committed")
            draft = self._draft()
            for proposal in draft.proposals:
                if proposal.text.casefold() == key:
                    return proposal
            if len(draft.proposals) >= MAX_PENDING:
                raise UsageError(f"{MAX_PENDING} proposals are already waiting for the user; ask them to review "
                                 f"those (cli-agent facts) before proposing more")
            number = max([draft.next_id, *(_number(i) + 1 for i in self._ids(draft))])
            proposal = Proposal(id=f"f{number}", text=text, reason=reason, time=self._clock(),
                                proposed_by=proposed_by)
            self._write_draft(dir_fd, _DraftFile(next_id=number + 1, proposals=[*draft.proposals, proposal]))
            return proposal

    def commit(self, fact_id: str, author: str | None = None) -> Fact:
        """Move a pending proposal into facts.toml; UsageError listing the pending IDs if there is no such one."""
        self.get(fact_id)  # an unknown ID fails before anything is created
        with self._locked(create=True) as dir_fd:
            draft = self._draft()
            proposal = self._find(draft.proposals, fact_id)
            facts = self._facts()
            fact = next((f for f in facts.facts if f.id == proposal.id), None)
            if fact is None:  # else a crash after the facts were written left it pending too: just drop it
                fact = Fact(id=proposal.id, text=proposal.text, author=author or _user(), time=self._clock())
                self._write_facts(dir_fd, facts, fact)
            rest = [p for p in draft.proposals if p.id != proposal.id]
            self._write_draft(dir_fd, draft.model_copy(update={"proposals": rest}))
            return fact

    def reject(self, fact_id: str) -> Proposal:
        """Drop a pending proposal; UsageError listing the pending IDs if there is no such one."""
        self.get(fact_id)
        with self._locked(create=True) as dir_fd:
            draft = self._draft()
            proposal = self._find(draft.proposals, fact_id)
            rest = [p for p in draft.proposals if p.id != proposal.id]
            self._write_draft(dir_fd, draft.model_copy(update={"proposals": rest}))
            return proposal

    # -- files ---------------------------------------------------------------------------------------------------

    def _facts(self) -> _FactsFile:
        return _load(self.facts_path, _FactsFile)

    def _draft(self) -> _DraftFile:
        return _load(self.draft_path, _DraftFile)

    def _ids(self, draft: _DraftFile) -> list[str]:
        return [f.id for f in self._facts().facts] + [p.id for p in draft.proposals]

    def _find(self, proposals: list[Proposal], fact_id: str) -> Proposal:
        wanted = fact_id.strip().casefold()
        for proposal in proposals:
            if proposal.id.casefold() in (wanted, f"f{wanted}"):
                return proposal
        ids = ", ".join(p.id for p in proposals)
        known = f"pending: {ids}" if ids else "no proposals are pending"
        raise UsageError(f"no pending fact proposal {fact_id!r} ({known}); see cli-agent facts")

    @contextlib.contextmanager
    def _locked(self, *, create: bool) -> Iterator[int]:
        """The `.cli-agent` folder opened without following links, flock-ed for one read-modify-write."""
        from cli_agent.beneath import open_dir

        try:
            root_fd = open_dir(str(self.root))
        except OSError as exc:
            raise ConfigError(f"the workspace {self.root} can't be opened: {exc.strerror or exc}") from None
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(PROJECT_DIR, 0o755, dir_fd=root_fd)
            try:
                dir_fd = open_dir(PROJECT_DIR, root_fd)
            except OSError as exc:
                raise ConfigError(f"{self.folder} can't be opened as a folder (a link or a file?): "
                                  f"{exc.strerror or exc}") from None
        finally:
            os.close(root_fd)
        try:
            _flock(dir_fd)
            yield dir_fd
        finally:
            os.close(dir_fd)  # closing releases the lock

    def _write_facts(self, dir_fd: int, facts: _FactsFile, new: Fact) -> None:
        block = "\n[[facts]]\n" + _toml_table(new.model_dump())
        try:
            old = self.facts_path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            old = None
        text = None
        if old is not None:  # append, keeping the user's comments and layout, if the result stays valid
            text = old + ("" if old.endswith("\n") or not old else "\n") + block
            try:
                if _FactsFile.model_validate(tomllib.loads(text)).facts[-1:] != [new]:
                    text = None
            except (tomllib.TOMLDecodeError, ValidationError):
                text = None
        if text is None:
            text = _render_facts(facts.model_copy(update={"facts": [*facts.facts, new]}))
        _write(dir_fd, FACTS_FILE, text)

    def _write_draft(self, dir_fd: int, draft: _DraftFile) -> None:
        parts = [_DRAFT_HEADER, f"next_id = {draft.next_id}\n"]
        parts += ["\n[[proposals]]\n" + _toml_table(p.model_dump()) for p in draft.proposals]
        _write(dir_fd, DRAFT_FILE, "".join(parts))


def workspace_for(settings: Settings, *, before_write: Callable[[Change], None] | None = None) -> Workspace:
    """The settings' workspace with every lock: config `locks`, facts.toml's `[locks] paths`; the user's config
    file (and a CLI_AGENT_CONFIG file) and the user state dir (undo journal, traces) are protected like
    `.cli-agent/**` when they lie inside the workspace. `before_write`: the undo journal's hook (issue 9)."""
    from cli_agent import paths
    from cli_agent.sandbox import DEFAULT_PROTECTED, Workspace

    root = Path(settings.workspace)
    locks = tuple(dict.fromkeys([*settings.locks, *FactStore(root).locks()]))
    configs = [paths.user_config_file(), paths.user_state_dir()]
    if os.environ.get("CLI_AGENT_CONFIG", "").strip():
        configs.append(Path(os.environ["CLI_AGENT_CONFIG"].strip()).expanduser())
    protected = [*DEFAULT_PROTECTED, *(g for g in (_inside_glob(root, c) for c in configs) if g)]
    return Workspace(root, protected=tuple(dict.fromkeys(protected)), locks=locks, before_write=before_write)


def render_list(store: FactStore, *, how: str = "cli-agent facts") -> str:
    """`cli-agent facts`: committed facts, pending proposals and locks, as plain text; `how` starts the commit and
    reject commands the text suggests (`/facts` in the REPL)."""
    committed, pending, locks = store.committed(), store.pending(), store.locks()
    lines = [f"Committed facts ({store.facts_path}):"]
    lines += [f"  {f.id}  {f.text}" + (f"  ({', '.join(x for x in (f.author, f.time) if x)})"
                                        if f.author or f.time else "") for f in committed] or ["  (none)"]
    lines += ["", f"Pending proposals ({store.draft_path}):"]
    for p in pending:
        lines += [f"  {p.id}  {p.text}", f"      reason: {p.reason or '(none given)'}  ({p.proposed_by}, {p.time})"]
    if not pending:
        lines.append("  (none)")
    else:
        lines += ["", f"  commit with: {how} commit ID   reject with: {how} reject ID"]
    lines += ["", "Locks (facts.toml [locks] paths): " + (", ".join(locks) if locks else "(none)")]
    return "\n".join(lines)


# -- /facts in the REPL ------------------------------------------------------------------------------------------

def register_repl_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    from cli_agent.ui.commands import Command

    registry.register(Command("facts", "the project's facts; commit or reject the model's proposals", _repl_facts,
                              "[commit|reject ID]",
                              help="/facts lists the committed facts, the proposals and the locks, then asks about "
                                   "each proposal: y commits it (the model sees it from the next turn on), n "
                                   "rejects it, Enter leaves it pending; Ctrl-C stops asking. /facts list only "
                                   "lists; /facts commit ID and /facts reject ID decide on one.",
                              complete=lambda c, args: ["list", "commit", "reject"]), replace=True)


def _repl_facts(ctx: CommandContext, args: str) -> None:
    from rich.text import Text

    from cli_agent.ui.escape import escape_for_terminal as esc

    store = FactStore(ctx.session.workspace.root)
    word, _, rest = args.partition(" ")
    if word in ("commit", "reject") and rest.strip():
        _decide(ctx, store, word, rest.strip())
        return
    if word not in ("", "list"):
        ctx.console.print(Text(f"usage: /facts [list|commit ID|reject ID], not {esc(args)!r}", style="yellow"))
        return
    ctx.console.print(Text(esc(render_list(store, how="/facts"))))
    if word == "list":
        return
    for proposal in store.pending():
        try:
            answer = ctx.ask(f"{proposal.id} {_clip(proposal.text)!r}: commit? [y/n, Enter: later] ",
                             choices=("y", "n"))
        except (KeyboardInterrupt, EOFError):
            ctx.console.print(Text("stopped: the rest stay pending", style="yellow"))
            return
        choice = {"y": "commit", "yes": "commit", "n": "reject", "no": "reject"}.get(answer.strip().lower())
        if choice is not None:
            _decide(ctx, store, choice, proposal.id)


def _decide(ctx: CommandContext, store: FactStore, choice: str, fact_id: str) -> None:
    from rich.text import Text

    from cli_agent.ui.escape import escape_for_terminal as esc

    try:
        if choice == "commit":
            fact = store.commit(fact_id)
            said, style = f"committed {fact.id}: {fact.text} (the model sees it from the next turn)", "green"
        else:
            proposal = store.reject(fact_id)
            said, style = f"rejected {proposal.id}: {proposal.text}", ""
    except UsageError as exc:  # no such proposal (any more), a broken file: one line, the REPL goes on
        said, style = str(exc), "yellow"
    ctx.console.print(Text(esc(said), style=style))


def _clip(text: str, width: int = 70) -> str:
    text = _clean(text)
    return text if len(text) <= width else text[:width - 1] + "…"


# -- helpers ---------------------------------------------------------------------------------------------------------

def _clean(text: str) -> str:
    """One line: whitespace runs become one space; lone surrogates (not UTF-8) become '?'."""
    return " ".join(text.encode("utf-8", "replace").decode("utf-8").split())


def _number(fact_id: str) -> int:
    match = re.fullmatch(r"f(\d+)", fact_id, re.IGNORECASE)
    return int(match.group(1)) if match else 0


def _user() -> str:
    import getpass

    try:
        return getpass.getuser() or "user"
    except Exception:  # no user name in the environment or the password database
        return "user"


def _flock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: no advisory lock, the atomic writes still keep each file whole
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def _write(dir_fd: int, name: str, text: str) -> None:
    from cli_agent import atomic

    try:
        atomic.write(dir_fd, name, text.encode("utf-8"), 0o644, create=False)
    except OSError as exc:
        raise ConfigError(f"{PROJECT_DIR}/{name} was not written: {exc.strerror or exc}") from None


def _load(path: Path, model: type[Any]) -> Any:
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return model()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        from cli_agent.specs import toml_position

        raise ConfigError(f"{path}: invalid TOML: {toml_position(str(exc))}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {_problem(exc, text)}") from None


def _problem(exc: ValidationError, text: str) -> str:
    err = exc.errors()[0]
    loc = err["loc"]
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    if err["type"] == "extra_forbidden":
        problem = f"{key}: unknown key"
    elif err["type"] == "missing":
        problem = f"{key}: missing required key"
    else:
        problem = f"{key}: {err['msg'][0].lower()}{err['msg'][1:]}"
    line = _line_of(text, loc)
    return f"line {line}: {problem}" if line else problem


def _line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best effort: the line of the table (or top-level key) an error is in."""
    lines = text.splitlines()
    if len(loc) >= 2 and isinstance(loc[1], int):  # facts[3] / proposals[0]: the (n+1)-th [[name]] header
        headers = [i for i, line in enumerate(lines) if re.match(rf"\s*\[\[\s*{re.escape(str(loc[0]))}\s*\]\]", line)]
        return headers[loc[1]] + 1 if loc[1] < len(headers) else None
    for i, line in enumerate(lines):
        if re.match(rf"\s*\[?\s*{re.escape(str(loc[0]))}\s*[\]=.]", line):
            return i + 1
    return None


def _inside_glob(root: Path, path: Path) -> str | None:
    """An anchored glob matching exactly `path` if it lies inside `root`, else None."""
    try:
        rel = Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return None
    if str(rel) == ".":
        return None
    return "/" + re.sub(r"([*?\[\\])", r"\\\1", rel.as_posix())


def _toml_string(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_table(values: dict[str, Any]) -> str:
    return "".join(f"{key} = {_toml_string(value)}\n" for key, value in values.items())


def _render_facts(facts: _FactsFile) -> str:
    paths = ", ".join(_toml_string(p) for p in facts.locks.paths)
    parts = [_FACTS_HEADER, f"\n[locks]\npaths = [{paths}]\n"]
    parts += ["\n[[facts]]\n" + _toml_table(f.model_dump()) for f in facts.facts]
    return "".join(parts)
