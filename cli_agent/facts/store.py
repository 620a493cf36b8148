"""Project facts and locks: `.cli-agent/facts.toml` (committed) and `.cli-agent/facts.draft.toml` (proposals).

    store = FactStore(workspace_root)
    proposal = store.propose("Tests use pytest.", "the user said so")   # the model's only way in (propose_fact)
    store.pending(), store.committed(), store.locks()
    store.commit(proposal.id, author="alice")                           # the user's, never a model tool
    store.reject("f4")
    render_list(store)                                                  # `cli-agent facts`, the built-in `/facts`
    list_json(store)                                                    # `cli-agent facts --json`

Every change is one read-modify-write under an advisory lock on the `.cli-agent` folder; a missing file is empty,
a broken one raises ConfigError naming the file and the line. The files' TOML, and how they are read and written,
are in `facts_file.py`; `/facts` with its questions in `ui/facts_commands.py`. The paths are fixed: nothing here
takes a path from the model, which is why the store may write below `.cli-agent/`, a folder the model's file tools
can't change.

`workspace_for(settings)` opens the sandbox with every lock (config `locks`, facts.toml's `[locks] paths`) and
every protected place (`cli_agent.fs.protected`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import getpass
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import ConfigError, UsageError, dataclass
from cli_agent.facts import file as facts_file
from cli_agent.fs import PROJECT_DIR, Workspace, open_dir, protected_globs
from cli_agent.validated import rule

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.contracts import Change
    from cli_agent.fs import Workspace

__all__ = ["FactStore", "list_json", "render_list", "workspace_for"]

FACTS_FILE = "facts.toml"
DRAFT_FILE = "facts.draft.toml"
MAX_TEXT = 1000  # characters of a fact
MAX_REASON = 2000
MAX_PENDING = 100  # proposals waiting at once: a looping model can't bury the user


def _time_text(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _not_blank(paths: list[str]) -> list[str]:
    if any(not p.strip() for p in paths):
        raise ValueError("a lock must be a non-empty glob")
    return paths


# The files' tables, checked by pydantic (`checked`) when a file is read; `rule(strict=True)`: a string, never a number
@dataclass(frozen=True, kw_only=True)
class Fact:
    """A committed fact. `id` and `author`/`time` may be left out of a hand-written one."""

    id: str = rule("", strict=True)
    text: str = rule(min_length=1, strict=True)
    author: str = rule("", strict=True)
    time: str = rule("", strict=True, before=_time_text)


@dataclass(frozen=True, kw_only=True)
class Proposal:
    id: str = rule(min_length=1, strict=True)
    text: str = rule(min_length=1, strict=True)
    reason: str = rule("", strict=True)
    time: str = rule("", strict=True, before=_time_text)
    proposed_by: str = rule("model", strict=True)


@dataclass(frozen=True)
class _Locks:
    paths: list[str] = rule(factory=list, after=_not_blank)


@dataclass(frozen=True)
class _FactsFile:
    facts: list[Fact] = field(default_factory=list)
    locks: _Locks = field(default_factory=_Locks)


@dataclass(frozen=True)
class _DraftFile:
    next_id: int = rule(1, ge=1)
    proposals: list[Proposal] = field(default_factory=list)


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
        return [f if f.id else replace(f, id=str(n)) for n, f in enumerate(facts, 1)]

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
        text, reason = one_line(text), one_line(reason)
        if not text:
            raise UsageError("the fact is empty: say it in one sentence")
        if len(text) > MAX_TEXT:
            raise UsageError(f"the fact is {len(text)} characters long; keep it under {MAX_TEXT}, one sentence")
        if len(reason) > MAX_REASON:
            raise UsageError(f"the reason is {len(reason)} characters long; keep it under {MAX_REASON}")
        with self._locked(create=True) as dir_fd:
            key = text.casefold()
            committed = self.committed()
            for fact in committed:
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
            ids = [f.id for f in committed] + [p.id for p in draft.proposals]  # an id-less fact's "3" is no fN
            number = max([draft.next_id, *(_number(i) + 1 for i in ids)])
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
            self._write_draft(dir_fd, replace(draft, proposals=rest))
            return fact

    def reject(self, fact_id: str) -> Proposal:
        """Drop a pending proposal; UsageError listing the pending IDs if there is no such one."""
        self.get(fact_id)
        with self._locked(create=True) as dir_fd:
            draft = self._draft()
            proposal = self._find(draft.proposals, fact_id)
            rest = [p for p in draft.proposals if p.id != proposal.id]
            self._write_draft(dir_fd, replace(draft, proposals=rest))
            return proposal

    # -- files ---------------------------------------------------------------------------------------------------

    def _facts(self) -> _FactsFile:
        return facts_file.load(self.facts_path, _FactsFile)

    def _draft(self) -> _DraftFile:
        return facts_file.load(self.draft_path, _DraftFile)

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
        text = facts_file.appended(self.facts_path, _FactsFile, "facts", new)  # the user's comments and layout kept
        if text is None:  # no file yet, or appending would not read back
            text = facts_file.render_facts(facts.locks.paths, [*facts.facts, new])
        facts_file.write(dir_fd, FACTS_FILE, text)

    def _write_draft(self, dir_fd: int, draft: _DraftFile) -> None:
        facts_file.write(dir_fd, DRAFT_FILE, facts_file.render_draft(draft.next_id, draft.proposals))


def workspace_for(settings: Settings, *,
                  before_write: Callable[[Change], Callable[[], None] | None] | None = None) -> Workspace:
    """The settings' workspace with every lock (config `locks`, facts.toml's `[locks] paths`) and every protected
    place (`cli_agent.fs.protected`: the config files read, the user dirs, `.git` and `.cli-agent` by their real
    place). `before_write`: the undo journal's hook."""
    root = Path(settings.workspace)
    locks = tuple(dict.fromkeys([*settings.locks, *FactStore(root).locks()]))
    configs = list(settings.config_files)
    if os.environ.get("CLI_AGENT_CONFIG", "").strip():
        configs.append(os.environ["CLI_AGENT_CONFIG"].strip())
    return Workspace(root, protected=protected_globs(root, configs), locks=locks, before_write=before_write)


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


def list_json(store: FactStore) -> dict[str, Any]:
    """`cli-agent facts --json`: committed facts, pending proposals and locks."""
    return {"committed": [dataclasses.asdict(f) for f in store.committed()],
            "pending": [dataclasses.asdict(p) for p in store.pending()], "locks": list(store.locks())}


def one_line(text: str) -> str:
    """One line: whitespace runs become one space; lone surrogates (not UTF-8) become '?'."""
    return " ".join(text.encode("utf-8", "replace").decode("utf-8").split())


def _number(fact_id: str) -> int:
    match = re.fullmatch(r"f(\d+)", fact_id, re.IGNORECASE)
    return int(match.group(1)) if match else 0


def _user() -> str:
    try:
        return getpass.getuser() or "user"
    except Exception:  # no user name in the environment or the password database
        return "user"


def _flock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_EX)
