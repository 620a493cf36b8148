"""The workspace: the only place that turns a model-given path into a file, and `apply`, the only write path.

Rules, in the order they are checked:

* A path is a string without NUL, each name at most 255 bytes, the whole at most 4096 bytes once normalised.
  It is normalised lexically (`a/./b/../c` is `a/c`); one that climbs above the root (`../x`) is refused. An
  absolute path is accepted only if it lies below the root (as resolved once at start, or as it was given);
  `/w/repo-evil` is not below `/w/repo`. `\\` and `%2e` are ordinary characters in a name on POSIX.
* The path is then opened one component at a time from the root's fd (`fs.resolve_beneath`): symbolic links whose
  target stays inside are followed, links leading outside are refused, and FIFOs, sockets and devices are never
  opened. Reading protected paths is allowed; nothing outside the root is ever read.
* Writing (`check_writable`, `apply`) also refuses the root itself, folders, files with more than one hard link,
  and paths matching a protected glob or a user lock, checked both as spelt and after links are resolved. Globs
  use `.gitignore` syntax (`cli_agent.fs.pathmatch`) and match case-insensitively in NFC, so `.GIT/config` and an
  NFD spelling of a locked name are refused too; a glob matching a folder covers everything below it. A write
  through a link inside the workspace changes the link's target: `check_writable` returns that canonical path,
  and `apply` then refuses any link on the way.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from cli_agent.contracts import Change, Later, ToolError, UsageError
from cli_agent.fs import atomic
from cli_agent.fs.credentials import credential_at, places
from cli_agent.fs.pathmatch import GlobSet, glob_problem
from cli_agent.fs.protected import DEFAULT_PROTECTED
from cli_agent.fs.resolve_beneath import Located, locate, open_dir, open_regular
from cli_agent.fs.walk import Listing, walk_tree

__all__ = ["Workspace"]

NAME_MAX = 255
PATH_MAX = 4096
_RAW_MAX = 65536  # longest path string looked at, before normalisation (`a/..` chains)
_HINT_ENTRIES = 50
_NEAREST_SCAN = 2000  # paths compared with a missing one


class Workspace:
    def __init__(self, root: str | Path, *, protected: Sequence[str] = DEFAULT_PROTECTED, locks: Sequence[str] = (),
                 before_write: Callable[[Change], Callable[[], None] | None] | None = None) -> None:
        given = os.path.abspath(os.fspath(root))
        real = os.path.realpath(given)
        if not os.path.isdir(real):
            raise UsageError(f"workspace {given} is not a folder")
        self.root = Path(real)
        self._roots = tuple(dict.fromkeys((real, given)))
        self._root_parts = tuple(_normalised(r) or () for r in self._roots)
        st = os.stat(real)
        self._root_id = (st.st_dev, st.st_ino)
        self._protected = GlobSet(protected, folded=True)
        bad = next(((glob, problem) for glob in locks if (problem := glob_problem(glob)) is not None), None)
        if bad is not None:  # a lock that matches nothing would leave the files it was meant to guard open
            raise UsageError(f"the lock {bad[0]!r} is not a valid glob: {bad[1]}")
        self._locks = GlobSet(locks, folded=True)
        self.locks = tuple(locks)
        self._before_write = before_write
        self._places = places(real)  # HOME, /etc or cli-agent's own folders around the root: where a file lies counts

    # -- paths -------------------------------------------------------------------------------------------------

    def relative(self, path: str) -> str:
        """The model's path as a normalised workspace-relative POSIX path ("." for the root), or ToolError."""
        return "/".join(self._parts(path)) or "."

    def _parts(self, path: str) -> tuple[str, ...]:
        if not isinstance(path, str):
            raise ToolError(f"path must be a string, not {type(path).__name__}")
        if "\0" in path:
            raise ToolError("path contains a NUL byte; refused")
        if len(path) > _RAW_MAX:
            raise ToolError(f"path is {len(path)} characters long; refused")
        try:
            size = len(os.fsencode(path))
        except UnicodeEncodeError:
            raise ToolError("path contains characters that can't be a file name (a lone surrogate?)") from None
        parts = _normalised(path)
        if path.startswith("/"):
            parts = next((parts[len(r):] for r in self._root_parts if parts is not None and parts[:len(r)] == r),
                         None)
            if parts is None:
                raise ToolError(f"{path} is outside the workspace; use a path relative to the workspace root",
                                files=Later(lambda: self._listing(".")))
        elif parts is None:
            raise ToolError(f"{path} climbs out of the workspace; use a path relative to the workspace root",
                            files=Later(lambda: self._listing(".")))
        if size > NAME_MAX:  # else no name and no path can be too long
            for part in parts:
                if len(os.fsencode(part)) > NAME_MAX:
                    raise ToolError(f"a name in the path is {len(os.fsencode(part))} bytes long; the limit is "
                                    f"{NAME_MAX}")
            size = len(os.fsencode("/".join(parts)))
            if size > PATH_MAX:
                raise ToolError(f"path is {size} bytes long once normalised; the limit is {PATH_MAX}")
        return parts

    def _locate(self, parts: tuple[str, ...], *, follow: bool = True) -> Located:
        root_fd = self._root_fd()
        try:
            return locate(root_fd, self._roots, parts, follow=follow)
        finally:
            os.close(root_fd)

    def _root_fd(self) -> int:
        """The root, opened again for each operation and checked to be the folder it was at the start."""
        try:
            fd = open_dir(self._roots[0])
        except OSError as exc:
            raise ToolError(f"the workspace folder {self.root} can't be opened: {exc.strerror}") from None
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._root_id:
            os.close(fd)
            raise ToolError(f"the workspace folder {self.root} was moved or replaced; refused")
        return fd

    # -- reading -----------------------------------------------------------------------------------------------

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        """The file's bytes (at most `limit`), read through the fd walk; folders and special files are refused."""
        return self.read(path, limit)[0]

    def read(self, path: str, limit: int | None = None) -> tuple[bytes, os.stat_result]:
        """`read_bytes` and the stat of the file it read (from the same open file)."""
        fd = self.open_fd(path)
        rel = self.relative(path)
        try:
            return _read_fd(fd, limit)
        except OSError as exc:
            raise ToolError(f"{rel} could not be read: {exc.strerror or exc}") from None
        finally:
            os.close(fd)

    def open_fd(self, path: str) -> int:
        """A descriptor open for reading on the regular file `path` (the caller closes it), for reading in pieces.

        Folders, special files and paths leading outside are refused (ToolError)."""
        parts = self._parts(path)
        rel = "/".join(parts) or "."
        with self._locate(parts) as loc:
            if loc.stat is None:
                raise self.not_found(rel)
            if not loc.tail or stat.S_ISDIR(loc.stat.st_mode):
                raise ToolError(f"{rel} is a folder; use list_files to see what it holds",
                                files=Later(lambda: self._listing(rel)))
            self._refuse_credential(rel, loc)
            return open_regular(loc)

    def secret(self, rel: str, st: os.stat_result | None = None) -> str | None:
        """Why the workspace path `rel` is a credential file no tool returns (`fs.credentials`), or None."""
        return credential_at(tuple(p for p in rel.split("/") if p not in ("", ".")), self._places, st)

    def _refuse_credential(self, rel: str, loc: Located) -> None:
        why = self.secret(rel) or self.secret(loc.relative, loc.stat)
        if why is not None and loc.stat is not None:
            kind = "folder" if stat.S_ISDIR(loc.stat.st_mode) else "file"
            raise ToolError(f"{rel} is a credential {kind} ({why}); cli-agent's file tools never read credentials")

    def exists(self, path: str) -> bool:
        """Whether the path exists (a link leading outside or in a loop counts as missing); bad paths raise."""
        parts = self._parts(path)
        try:
            with self._locate(parts) as loc:
                return loc.stat is not None
        except ToolError:
            return False

    def is_dir(self, path: str) -> bool:
        parts = self._parts(path)
        try:
            with self._locate(parts) as loc:
                return loc.stat is not None and stat.S_ISDIR(loc.stat.st_mode)
        except ToolError:
            return False

    def walk(self, path: str = ".", *, depth: int | None = None, pattern: str | None = None,
             limit: int = 1000) -> Listing:
        """Workspace-relative paths below `path`, sorted; folders end with "/" (only listed without `pattern`).

        Skips `.git`, what `.gitignore` files ignore and credential files; never descends into a linked folder.
        `depth=1` lists the folder's own entries. `pattern` is a glob matched against the path relative to `path`.
        At most `limit` entries (shallower ones first); a walk that stops short for another reason says so in
        `unfinished`.
        """
        parts = self._parts(path)
        rel = "/".join(parts) or "."
        if depth is not None and depth < 1:
            raise ToolError(f"depth must be 1 or more, not {depth}")
        problem = glob_problem(pattern) if pattern else None
        if problem is not None:
            raise ToolError(f"the pattern {pattern!r} is not a valid glob: {problem}")
        with self._locate(parts) as loc:
            if loc.stat is None:
                raise self.not_found(rel)
            self._refuse_credential(rel, loc)
            if loc.tail and not stat.S_ISDIR(loc.stat.st_mode):
                return Listing([loc.relative])
            try:
                start = open_dir(loc.tail[-1], loc.dir_fd) if loc.tail else os.dup(loc.dir_fd)
            except OSError as exc:
                raise ToolError(f"{rel} changed while being opened ({exc.strerror}); try again") from None
            base = loc.parts
        try:
            root_fd = self._root_fd()
            try:
                return walk_tree(root_fd, start, base, depth=depth, pattern=pattern, limit=limit,
                                 hide=lambda names: credential_at(names, self._places) is not None)
            finally:
                os.close(root_fd)
        finally:
            os.close(start)

    def resolve(self, path: str) -> tuple[str, bool]:
        """(the canonical workspace-relative path `path` leads to, whether it is a folder); ToolError if missing."""
        parts = self._parts(path)
        with self._locate(parts) as loc:
            if loc.stat is None:
                raise self.not_found("/".join(parts) or ".")
            return loc.relative, not loc.tail or stat.S_ISDIR(loc.stat.st_mode)

    def holds_file(self, rel: str) -> bool:
        """Whether `rel` is a regular file reached from the root without following a link (a search result)."""
        try:
            parts = self._parts(rel)
            with self._locate(parts, follow=False) as loc:
                return loc.stat is not None and stat.S_ISREG(loc.stat.st_mode) and loc.parts == parts
        except ToolError:
            return False

    def nearest(self, path: str, n: int = 5) -> list[str]:
        """Existing paths closest to a missing one (same name elsewhere first, then difflib), for hints."""
        try:
            rel = self.relative(path)
        except ToolError:
            return []
        try:
            candidates = [c.rstrip("/") for c in self.walk(".", limit=_NEAREST_SCAN)]
        except ToolError:
            return []
        if not candidates:
            return []
        name = posixpath.basename(rel).casefold()
        by_name = [c for c in candidates if posixpath.basename(c).casefold() == name]
        close = difflib.get_close_matches(rel, candidates, n=n, cutoff=0.5)
        names = {posixpath.basename(c): c for c in candidates}
        close_names = [names[m] for m in difflib.get_close_matches(posixpath.basename(rel), list(names), n=n,
                                                                   cutoff=0.7)]
        return list(dict.fromkeys(by_name + close + close_names))[:n]

    def _listing(self, folder: str) -> list[str]:
        """The entries of `folder` (or of the deepest existing folder on the way to it), for error hints."""
        try:
            parts = self._parts(folder)
            with self._locate(parts) as loc:
                is_dir = loc.stat is not None and stat.S_ISDIR(loc.stat.st_mode)
                found = loc.parts if is_dir else loc.dir_parts
            return self.walk("/".join(found) or ".", depth=1, limit=_HINT_ENTRIES)
        except ToolError:
            return []

    def not_found(self, path: str) -> ToolError:
        """The error for a missing path, with the nearest existing paths and its folder's entries as hints."""
        rel = self.relative(path)
        return ToolError(f"{rel} does not exist", nearest=Later(lambda: self.nearest(rel)),
                         files=Later(lambda: self._listing(rel)))

    # -- writing -----------------------------------------------------------------------------------------------

    def check_writable(self, path: str) -> str:
        """The canonical workspace-relative path a write to `path` would change, or ToolError saying why not."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path is empty: name the file to write")
        parts = self._parts(path)
        if not parts:
            raise ToolError("the workspace root itself can't be written or deleted; name a file")
        if path.endswith("/"):
            raise ToolError(f"{path} ends with '/': name a file, not a folder")
        self._refuse_guarded("/".join(parts))
        with self._locate(parts) as loc:
            canon = "/".join(loc.parts)
            if not loc.tail:
                raise ToolError(f"{path} leads to the workspace root itself, which can't be written or deleted")
            self._refuse_guarded(canon)
            st = loc.stat
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                raise ToolError(f"{canon} is a folder; name a file", files=self._listing(canon))
            if not stat.S_ISREG(st.st_mode):
                raise ToolError(f"{canon} is not a regular file; refused")
            if st.st_nlink > 1:
                raise ToolError(f"{canon} has {st.st_nlink} hard links (it is also a file elsewhere, maybe outside "
                                f"the workspace); refused")
        return canon

    def check_guarded(self, path: str) -> str:
        """The normalised path if no protection or lock covers it, else ToolError; the disk is not looked at (for a
        path a change set will make possible, e.g. a file where it removes a folder)."""
        parts = self._parts(path)
        if not parts:
            raise ToolError("the workspace root itself can't be written or deleted; name a file")
        rel = "/".join(parts)
        self._refuse_guarded(rel)
        return rel

    def _refuse_guarded(self, rel: str) -> None:
        glob = self._protected.match(rel)
        if glob is not None:
            raise ToolError(f"{rel} is protected (matches {glob!r}); cli-agent never changes it")
        glob = self._locks.match(rel)
        if glob is not None:
            raise ToolError(f"{rel} is locked by the user (lock {glob!r}); leave it as it is or ask the user")

    def apply(self, change: Change) -> None:
        """Write `change` if the file on disk is still `change.before`: the only write path of cli-agent."""
        canon = self.check_writable(change.path)
        if canon != change.path:
            raise ToolError(f"{change.path} now leads to {canon} (a link changed on disk since it was read); read "
                            f"it again")
        if change.before is None and change.after is None:
            raise ToolError(f"{change.path}: the change neither creates, changes nor deletes anything")
        with self._locate(tuple(canon.split("/")), follow=False) as loc:
            try:
                current, st = atomic.current(loc)
            except OSError as exc:
                raise ToolError(f"{change.path} could not be read back: {exc.strerror or exc}") from None
            if current != change.before:
                raise ToolError(f"{change.path} changed on disk since it was read; read it again")
            retract = None
            if self._before_write is not None:
                try:
                    retract = self._before_write(change)
                except Exception as exc:
                    raise ToolError(f"{change.path} was not written: recording the change for undo failed "
                                    f"({exc})") from exc
            try:
                atomic.put(loc, change, st)
            except OSError as exc:
                if retract is not None:  # the journal must not say it happened
                    retract()
                raise ToolError(f"{change.path} was not written: {exc.strerror or exc}; it is unchanged") from None


def _normalised(path: str) -> tuple[str, ...] | None:
    """`path`'s names with "", "." and "name/.." removed (lexically); None when a ".." climbs above the start.

    An absolute path starts at "/", where ".." stays, as the kernel does.
    """
    out: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if out:
                out.pop()
            elif not path.startswith("/"):
                return None
        elif part and part != ".":
            out.append(part)
    return tuple(out)


def _read_fd(fd: int, limit: int | None) -> tuple[bytes, os.stat_result]:
    st = os.fstat(fd)
    chunks: list[bytes] = []
    total = 0
    while limit is None or total < limit:
        chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks), st
