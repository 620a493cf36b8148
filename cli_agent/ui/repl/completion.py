"""The input side of the REPL's prompt: tab completion, keys, history, `@path` attachments.

Completion offers slash commands (and their arguments: workflow parameters, approval modes, ...) and workspace
paths after `@`, listed through the sandbox (`Workspace.walk`: `.gitignore` honoured, nothing outside).
`@path` and `@"path with spaces"` attach a file's content (or a folder's listing) to the message.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import emacs_insert_mode, has_focus, vi_insert_mode
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

from cli_agent.contracts import IMAGE_SUFFIXES, ToolError
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.fs import paths

if TYPE_CHECKING:

    from cli_agent.fs import Workspace
    from cli_agent.ui.repl.commands.commands import CommandContext

_AT_END = re.compile(r'(?:^|(?<=\s))@("[^"]*|[^\s"]*)$')  # an @reference being typed at the cursor
_AT_ANY = re.compile(r'(?:^|(?<=\s))@(?:"([^"]+)"|([^\s"]+))')  # every complete @reference in a message
_TRAILING = ".,;:!?)]}'"  # punctuation after an unquoted @path ends the sentence, not the name
MAX_PATHS = 5000
ATTACH_MAX = 100_000  # bytes of one attached file sent to the model
MAX_SHOWN = 50
QUITTING = ("exit", "quit")  # commands that end the REPL


def attachment_refs(text: str) -> list[tuple[str, str]]:
    """(as written, path) for each `@path` / `@"path"` in the text; `a@b` (an address) is not a reference."""
    refs = []
    for m in _AT_ANY.finditer(text):
        path = m.group(1) or m.group(2).rstrip(_TRAILING)  # "look at @a.py, then" means a.py
        if path:
            refs.append((m.group(0), path))
    return refs


class PathIndex:
    """The workspace's paths, walked at most every `ttl` seconds (completion runs on every key). `workspace` may
    give None (the REPL is still starting): no paths yet, and the next key asks again."""

    def __init__(self, workspace: Callable[[], Workspace | None], *, ttl: float = 3.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.workspace = workspace
        self.ttl = ttl
        self.clock = clock
        self._paths: list[str] = []
        self._at: float | None = None

    def paths(self) -> list[str]:
        now = self.clock()
        if self._at is None or now - self._at > self.ttl:
            try:
                workspace = self.workspace()
                if workspace is None:
                    return []
                self._paths = workspace.walk(".", limit=MAX_PATHS)
            except Exception:  # a vanished or unreadable workspace completes nothing
                self._paths = []
            self._at = now
        return self._paths


def match_paths(paths: Iterable[str], fragment: str, limit: int = MAX_SHOWN) -> list[str]:
    """Paths starting with the fragment first, then those whose file name starts with it, then containing it."""
    needle = fragment.casefold()
    starts, names, inside = [], [], []
    for path in paths:
        folded = path.casefold()
        if folded.startswith(needle):
            starts.append(path)
        elif needle and folded.rstrip("/").rsplit("/", 1)[-1].startswith(needle):
            names.append(path)
        elif needle and needle in folded:
            inside.append(path)
    if not needle:  # only the top level until something is typed
        starts = [p for p in starts if "/" not in p.rstrip("/")]
    return (starts + names + inside)[:limit]


class ReplCompleter(Completer):
    def __init__(self, ctx: CommandContext, paths: PathIndex | None = None) -> None:
        self.ctx = ctx
        self.paths = paths or PathIndex(lambda: ctx.session.workspace)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        at = _AT_END.search(text)
        if at is not None:
            yield from self._paths(at.group(1))
        elif text.startswith("/") and not text.startswith("//"):
            yield from self._commands(text)

    def _paths(self, typed: str) -> Iterator[Completion]:
        fragment = typed.lstrip('"')
        for path in match_paths(self.paths.paths(), fragment):
            insert = f'"{path}"' if any(c.isspace() or c == '"' for c in path) or typed.startswith('"') else path
            if path.endswith("/") and insert.endswith('"'):
                insert = insert[:-1]  # keep the quote open to go on into the folder
            yield Completion(insert, start_position=-len(typed), display=esc(path),
                             display_meta="folder" if path.endswith("/") else "")

    def _commands(self, text: str) -> Iterator[Completion]:
        name, space, args = text[1:].partition(" ")
        registry = self.ctx.commands
        if not space:  # the quitting command last: never the first pick of a Tab
            for command in sorted(registry.commands(), key=lambda c: c.name in QUITTING):
                if command.name.startswith(name):
                    yield Completion("/" + command.name, start_position=-len(text), display="/" + esc(command.name),
                                     display_meta=esc(command.summary))
            return
        found = registry.get(name)
        if found is None or found.complete is None:
            return
        word = args.rsplit(" ", 1)[-1]
        try:
            candidates: Any = list(found.complete(self.ctx, args))
        except Exception:  # a failing completer offers nothing rather than breaking the prompt
            return
        for candidate in candidates:
            if isinstance(candidate, str) and candidate.startswith(word):
                yield Completion(candidate, start_position=-len(word), display=esc(candidate))


# -- keys, history, toolbar -----------------------------------------------------------------------------------

def bindings(cycle_mode: Callable[[], None] | None = None) -> Any:
    """Enter sends, Meta+Enter / Ctrl-J a new line, Ctrl-C clears the line (or leaves an empty prompt),
    Shift+Tab calls `cycle_mode` (the next approval mode), Esc Esc on an empty prompt is `/rewind`."""
    bindings = KeyBindings()
    focused = has_focus(DEFAULT_BUFFER)

    @bindings.add("enter", filter=focused)
    def _send(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.complete_state is not None and buffer.complete_state.current_completion is not None:
            buffer.complete_state = None  # Enter on a chosen completion takes it; the next Enter sends
            return
        buffer.validate_and_handle()

    @bindings.add("escape", "enter", filter=focused)
    @bindings.add("c-j", filter=focused)
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add(Keys.Any, filter=focused & (emacs_insert_mode | vi_insert_mode))
    def _insert(event: Any) -> None:
        event.current_buffer.insert_text(event.data * event.arg + _typed_ahead(event.app.key_processor.input_queue))

    @bindings.add("c-c", filter=focused)
    def _interrupt(event: Any) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()  # like a shell: Ctrl-C drops the line being typed
        else:
            event.app.exit(exception=KeyboardInterrupt())

    @bindings.add("tab", filter=focused)
    def _tab(event: Any) -> None:
        complete_common(event.current_buffer)

    @bindings.add("escape", "escape", filter=focused)
    def _rewind(event: Any) -> None:
        if not event.current_buffer.text.strip():  # Esc Esc on an empty prompt: /rewind
            event.app.exit(result="/rewind")

    if cycle_mode is not None:
        @bindings.add("s-tab")
        def _cycle(event: Any) -> None:
            cycle_mode()
            event.app.invalidate()

    return bindings


def complete_common(buffer: Any) -> None:
    """Tab, as in a shell: the one completion, else what every completion shares beyond what is typed, else the
    menu's next entry (the first Tab on an ambiguous word picks nothing until the shared part is in the line)."""
    state = buffer.complete_state
    if state is not None and state.current_completion is not None:
        buffer.complete_next()
        return
    if buffer.completer is None:
        return
    document = buffer.document
    before = document.text_before_cursor
    found = list(buffer.completer.get_completions(document, CompleteEvent(completion_requested=True)))
    if not found:
        return
    if len(found) == 1:
        buffer.apply_completion(found[0])
        return
    results = [before[:len(before) + c.start_position] + c.text for c in found]
    low, high = min(results), max(results)  # what every result shares: what the first and last sorted share
    common = low[:next((i for i, (a, b) in enumerate(zip(low, high, strict=False)) if a != b), len(low))]
    if len(common) > len(before) and common.startswith(before):
        buffer.insert_text(common[len(before):])
        return
    if state is None:
        buffer.start_completion(select_first=False)
    else:
        buffer.complete_next()


def _typed_ahead(queue: Any) -> str:
    """The printable characters waiting right behind a typed one, taken off the key queue: text that arrives faster
    than it is handled (a paste the terminal does not mark as one, fast typing) goes into the buffer in one insert,
    so the completer, the toolbar and the screen follow once for it, not once per character. Anything else (Enter,
    a control key, an escape sequence) stays queued and ends the run."""
    taken: list[str] = []
    while queue:
        key = queue[0]
        if isinstance(key.key, Keys) or key.data != key.key or len(key.data) != 1 or not key.data.isprintable():
            break
        taken.append(queue.popleft().data)
    return "".join(taken)


def history(warn: Callable[[str], None]) -> Any:
    """The prompt's history, kept in the user state dir; in memory only (and `warn` says so) where it can't be."""
    try:
        path = paths.user_state_dir() / "history"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        return FileHistory(str(path))
    except OSError as exc:
        warn(f"history is not kept: {exc.strerror or exc}")
        return InMemoryHistory()


# -- @path attachments -----------------------------------------------------------------------------------------

def _fence(text: str) -> str:
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _attachment(workspace: Workspace, path: str) -> tuple[str | None, str]:
    """(the block to append or None, a note for the user)."""
    try:
        if workspace.is_dir(path):
            entries = workspace.walk(path, depth=1, limit=200)
            return f"Folder `{path}` holds:\n" + "\n".join(entries), f"attached the listing of {path}"
        data = workspace.read_bytes(path, limit=ATTACH_MAX + 1)
    except ToolError as exc:
        return None, f"@{path} not attached: {exc.message}"
    if b"\0" in data[:8192]:
        return None, f"@{path} not attached: a binary file"
    cut = len(data) > ATTACH_MAX
    text = data[:ATTACH_MAX].decode("utf-8", errors="replace")
    lines = text.count("\n") + (not text.endswith("\n") and bool(text))
    head = f"File `{path}`" + (f" (the first {ATTACH_MAX:,} bytes)" if cut else "") + ":"
    fence = _fence(text)
    note = f"attached {path} ({lines:,} lines{', cut' if cut else ''})"
    return f"{head}\n{fence}\n{text.rstrip(chr(10))}\n{fence}", note


def attach_files(text: str, workspace: Workspace) -> tuple[str, list[str]]:
    """The message with the content of each `@path` appended (read through the sandbox), and notes for the user."""
    blocks: list[str] = []
    notes: list[str] = []
    seen: set[str] = set()
    for _, path in attachment_refs(text):
        if path in seen or path.lower().endswith(IMAGE_SUFFIXES):  # an image goes as an image part (session.images)
            continue
        seen.add(path)
        block, note = _attachment(workspace, path)
        notes.append(note)
        if block is not None:
            blocks.append(block)
    if not blocks:
        return text, notes
    return text + "\n\nAttached by the user:\n\n" + "\n\n".join(blocks), notes
