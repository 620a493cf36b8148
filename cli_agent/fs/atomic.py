"""Atomic writes and deletes inside an open folder, by name: nothing here takes a path string.

`put` carries out a planned `Change` at a `Located` place (`Workspace.apply` has checked it first).

A write goes to a temporary file in the same folder (created `O_EXCL | O_NOFOLLOW` through the folder's fd), is
fsynced, given its mode, then renamed over the target and the folder fsynced; a failure at any point removes the
temporary file and leaves the target as it was. A new file is linked into place with `link()`, which fails if
something appeared under that name meanwhile, instead of renamed over it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from typing import TYPE_CHECKING

from cli_agent.contracts import Change, ToolError
from cli_agent.fs.resolve_beneath import Located, open_dir, open_regular

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["fsync_dir"]

TEMP_PREFIX = ".cli-agent-tmp-"
_NO_HARDLINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS}


def make_dirs(dir_fd: int, names: tuple[str, ...]) -> int:
    """Create the folders `names` below `dir_fd` one by one (never following a link) and open the last one."""
    fd = os.dup(dir_fd)
    try:
        for name in names:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=fd)
            child = open_dir(name, fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def write(dir_fd: int, name: str, data: bytes, mode: int, *, create: bool,
          owner: tuple[int, int] | None = None) -> None:
    """Put `data` under `name` in folder `dir_fd` atomically; `create` refuses to replace anything."""
    tmp = TEMP_PREFIX + secrets.token_hex(8)
    placed = False
    try:  # the temp file is opened inside the try: a signal landing as os.open returns still removes it
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=dir_fd)
        except FileExistsError:  # not ours (a 64-bit random name taken): leave it alone
            placed = True
            raise
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            if owner is not None:
                with contextlib.suppress(OSError):
                    os.fchown(fd, *owner)
            os.fchmod(fd, mode & 0o7777)  # after fchown, which clears setuid and setgid
        finally:
            os.close(fd)
        if create:
            _link_new(dir_fd, tmp, name)
        else:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        placed = True
        os.fsync(dir_fd)
    finally:
        if not placed or create:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)


def _link_new(dir_fd: int, tmp: str, name: str) -> None:
    try:
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise ToolError(f"{name} appeared on disk while it was being created; read it and try again") from None
    except OSError as exc:
        if exc.errno not in _NO_HARDLINKS:
            raise
        try:  # a file system without hard links: check, then rename (a small window, the best it allows)
            os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return
        raise ToolError(f"{name} appeared on disk while it was being created; read it and try again") from None


def fsync_dir(path: Path) -> None:
    """Make a folder's entries (a rename, a new file) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove(dir_fd: int, name: str) -> None:
    os.unlink(name, dir_fd=dir_fd)
    os.fsync(dir_fd)


def current(loc: Located) -> tuple[bytes | None, os.stat_result | None]:
    """The bytes and stat of the regular file at `loc`, or (None, None) when nothing is there."""
    if loc.stat is None:
        return None, None
    fd = open_regular(loc)
    try:
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(), os.fstat(fd)
    finally:
        os.close(fd)


def put(loc: Located, change: Change, st: os.stat_result | None) -> None:
    """Write or delete `change` at `loc` (the file's folder and any missing folders on the way in `loc.tail`)."""
    leaf = loc.tail[-1]
    if change.after is None:
        remove(loc.dir_fd, leaf)
        return
    mode = change.mode if change.mode is not None else (st.st_mode if st is not None else 0o644)
    owner = (st.st_uid, st.st_gid) if st is not None else None
    dir_fd = make_dirs(loc.dir_fd, loc.tail[:-1]) if len(loc.tail) > 1 else os.dup(loc.dir_fd)
    try:
        write(dir_fd, leaf, change.after, mode, create=change.before is None, owner=owner)
    finally:
        os.close(dir_fd)
