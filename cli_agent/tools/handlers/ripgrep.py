"""Searching with ripgrep (`rg`, shipped by the `ripgrep` package): its walk, its line reader, its regex engine.

The command is built so that nothing the model says is read as a flag: the pattern goes after `-e`, the path after
`--`, a name glob into a file type (`--type-add`, escaped; unlike `-g`, a type keeps `.gitignore` in force; a glob
with a `/` is matched here instead), and `--no-config` keeps a `RIPGREP_CONFIG_PATH` from adding any. rg runs in
the workspace root, follows no symbolic link while walking, reads `.gitignore` files the way the tool's own walk
does (with or without a `.git` folder, none above the workspace, no `.ignore`, `.rgignore` or global excludes),
skips `.git`, and searches hidden files and files of any size.
Binary files are searched too (`--binary`) only so that those holding the pattern can be listed as skipped; their
lines are never shown. Its JSON output is read one message at a time, so memory holds one line, not the results.

`run` returns None when rg is not there or can't take the pattern (Python-only syntax: look-around,
back-references...); the caller then scans in Python.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cli_agent.fs import compile_glob
from cli_agent.tools.handlers.hits import FileHits, Hits, excerpt

LINE_MAX = 16 << 20  # a JSON message longer than this (one huge matching line) is counted, not shown
_FLAGS = ("--no-config", "--json", "--hidden", "--binary", "--crlf", "--no-require-git", "--no-ignore-parent",
          "--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude", "--iglob", "!.git")
_LINE_NUMBER = re.compile(rb'"line_number":(\d+)')
_PLAIN_BEGIN = re.compile(rb'\{"type":"begin","data":\{"path":\{"text":"([^"\\]*)"\}\}\}\n?\Z')
_PATTERN_ERRORS = ("regex parse error", "error parsing regex", "the literal", "not allowed in a regex",
                   "look-around", "backreferences", "Unicode-aware")


def rg_binary() -> str | None:
    """The `rg` installed with this package (beside its Python), else the one on PATH, else None."""
    beside = Path(sysconfig.get_path("scripts")) / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def run(root: Path, scope: str, scope_is_dir: bool, pattern: str, *, literal: bool, glob: str | None,
        ignore_rules: list[str], hits: Hits, deadline: float, ignore_case: bool = False) -> str | None:
    """Search with rg into `hits`; the reason it stopped early ("" when it finished), or None if rg can't do it."""
    exe = rg_binary()
    if exe is None or "\0" in pattern:
        return None
    cmd = [exe, *_FLAGS, *(["-F"] if literal else []), *(["-i"] if ignore_case else []), "-e", pattern]
    keep = None
    if glob and scope_is_dir:
        if "/" in glob.rstrip("/") or ":" in glob or glob.startswith("!"):
            # rg's own -g would search ignored files too; a file type can't hold a path: filter here
            match, base = compile_glob(glob), "" if scope == "." else scope + "/"
            keep = lambda path: bool(match.fullmatch(path.removeprefix(base)))  # noqa: E731
        else:  # a file type matches names as the glob does, and unlike -g it keeps .gitignore in force
            cmd += ["--type-add", "selected:" + _escaped(glob), "-t", "selected"]
    target = ["--", "./" + scope if scope != "." else "."]
    if not ignore_rules:
        return _collect(cmd + target, root, hits, deadline, keep)
    with tempfile.NamedTemporaryFile("w", suffix=".gitignore", encoding="utf-8", errors="surrogateescape") as fh:
        fh.write("\n".join(ignore_rules) + "\n")
        fh.flush()
        return _collect([*cmd, "--ignore-file", fh.name, *target], root, hits, deadline, keep)


def _collect(cmd: list[str], root: Path, hits: Hits, deadline: float,
             keep: Callable[[str], bool] | None) -> str | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIPGREP")}
    try:
        proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
    except OSError:
        return None
    assert proc.stdout is not None and proc.stderr is not None
    errors: list[bytes] = []
    reader = threading.Thread(target=errors.extend, args=(proc.stderr,), daemon=True)
    reader.start()
    started = time.monotonic()
    timer = threading.Timer(max(deadline - started, 0.0), proc.kill)
    timer.start()
    try:
        _read_messages(_lines(proc.stdout), hits, keep)
    finally:
        timer.cancel()
        proc.stdout.close()
        code = proc.wait()
        reader.join()
        proc.stderr.close()
    complaints = b"".join(errors).decode("utf-8", "surrogateescape")
    if code == 2 and not hits.total and any(marker in complaints for marker in _PATTERN_ERRORS):
        return None
    for line in complaints.splitlines():
        _skipped_from(line, hits)
    if code < 0:
        return (f"the search was stopped at its time limit after {time.monotonic() - started:.1f} s; the counts "
                f"cover only the files read until then")
    return ""


def _lines(stream: Any) -> Iterator[bytes]:
    """The stream's lines; one longer than LINE_MAX comes back cut to its first LINE_MAX bytes."""
    while True:
        line = stream.readline(LINE_MAX)
        if not line:
            return
        if line.endswith(b"\n"):
            yield line
            continue
        yield line  # cut: skip the rest of it
        while True:
            rest = stream.readline(1 << 20)
            if not rest or rest.endswith(b"\n"):
                break


def _read_messages(lines: Iterator[bytes], hits: Hits, keep: Callable[[str], bool] | None) -> None:
    current: FileHits | None = None  # rg sends a file's messages together: begin, its matches, end
    for raw in lines:
        message = _cheap(raw, current)
        if message is None:
            try:
                message = json.loads(raw)
            except ValueError:
                path = _path_of_cut_line(raw)
                if path is not None:
                    current = current if current is not None and current.path == path else FileHits(hits, path)
                    current.add(0, None)
                    hits.skip(path, f"a matching line is longer than {LINE_MAX >> 20} MiB; it is counted, not shown")
                continue
        kind, data = message.get("type"), message.get("data") or {}
        if kind == "begin":
            path = _text(data["path"])
            current = FileHits(hits, path) if keep is None or keep(path) else None
        elif kind == "match" and current is not None:
            number = int(data["line_number"])
            if current.wants(number):
                line = _text(data["lines"], path=False)
                first = data["submatches"][0]["start"] if data.get("submatches") else 0
                start = len(line.encode("utf-8", "surrogateescape")[:first].decode("utf-8", "replace"))
                current.add(number, excerpt(line, start))
            else:
                current.add(number, None)
        elif kind == "end" and current is not None:
            if data.get("binary_offset") is not None:
                current.skip(f"binary file (a NUL byte at offset {data['binary_offset']}); the pattern occurs in it")
            else:
                current.commit()
            current = None


def _cheap(raw: bytes, current: FileHits | None) -> dict[str, Any] | None:
    """The message as far as it counts, without decoding its JSON, for the three kinds that make most of a wide
    search's output (a `"` inside a JSON string is always escaped, so the markers can't come from a path or a line):
    a file's begin whose path needs no unescaping, a text file's end, and a match whose line won't be shown (past
    the cap), whose number is all that counts. None: decode it."""
    plain = _PLAIN_BEGIN.match(raw)
    if plain is not None:
        return {"type": "begin", "data": {"path": {"text": plain.group(1).decode("utf-8", "surrogateescape")}}}
    if raw.startswith(b'{"type":"end"') and b'"binary_offset":null' in raw:
        return {"type": "end"}
    if raw.startswith(b'{"type":"match"') and current is not None:
        found = _LINE_NUMBER.search(raw)
        if found is not None and not current.wants(int(found.group(1))):
            return {"type": "match", "data": {"line_number": found.group(1)}}
    return None


def _text(value: dict[str, str], *, path: bool = True) -> str:
    """A path (as `os` spells it) or a line (invalid UTF-8 replaced) from rg's JSON."""
    if "text" in value:
        text = value["text"]
    else:
        raw = base64.b64decode(value["bytes"])
        text = os.fsdecode(raw) if path else raw.decode("utf-8", "replace")
    return text.removeprefix("./") if path else text


def _path_of_cut_line(raw: bytes) -> str | None:
    head = raw[:8192].decode("utf-8", "replace")
    at = head.find('"path":')
    if not head.startswith('{"type":"match"') or at < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(head, at + len('"path":'))
        return _text(value)
    except (ValueError, KeyError, TypeError):
        return None


def _skipped_from(line: str, hits: Hits) -> None:
    """rg's complaint about one file (`rg: ./x: Permission denied (os error 13)`) as a skipped entry."""
    if not line.startswith("rg: "):
        return
    body = line[4:]
    path, sep, reason = body.rpartition(": ")
    hits.skip(path.removeprefix("./") if sep else "", reason)


def _escaped(glob: str) -> str:
    """The tool's glob in rg's syntax, where `{`, `}` and `,` are alternation."""
    return "".join("\\" + c if c in "{}," else c for c in glob)


def ignore_rules(chain: list[tuple[str, str]]) -> list[str]:
    """(folder, `.gitignore` text) of the folders above the searched one, as root-relative `--ignore-file` rules."""
    out = []
    for base, text in chain:
        prefix = "/" + (base + "/" if base else "")
        for raw in text.splitlines():
            line = raw.rstrip("\r")
            if not line.strip() or line.startswith("#"):
                continue
            negate = line.startswith("!")
            body = line[1:] if negate else line
            anchored = "/" in body.rstrip(" ").rstrip("/")
            out.append(("!" if negate else "") + prefix + (body.lstrip("/") if anchored else "**/" + body))
    return out
