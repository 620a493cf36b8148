"""The one opener for the files cli-agent reads on the host outside the workspace tools: config, facts, workflows,
tool specs, test detection, verification's scans, traces for replay and resume, MCP logs.

    data = read_regular(path, limit=CONFIG_LIMIT)       # bytes; HostFileError (an OSError) if it can't be
    data = read_regular(path, limit, cut=True)          # a file past `limit` gives its first `limit` bytes
    toml = read_toml(RegularFile(path), where, ConfigError)   # what `validated.reader` reads, bounded the same way

A file is opened without blocking (`O_NONBLOCK`: a FIFO with no writer opens at once, a device with no data does
not wait), optionally without following a final link (`follow=False`), and `fstat` must then say it is a regular
file: a FIFO, a socket, a device (`/dev/zero`) or a folder is refused with one line saying what it is. At most
`limit` bytes are ever read; a longer file is refused (`cut=False`) or cut. The workspace's own files go through
`resolve_beneath.open_regular`, which applies the same rule beneath the workspace's root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

__all__ = ["CONFIG_LIMIT", "TRACE_LIMIT", "RegularFile", "open_host_file", "read_regular", "read_regular_or_none"]

CONFIG_LIMIT = 4 << 20  # a config, facts, workflow or tool spec file: far more than any real one
SCAN_LIMIT = 1 << 20  # what a scan (test detection, verification's import scan) reads of a file
TRACE_LIMIT = 512 << 20  # a trace read whole for replay or resume


class HostFileError(OSError):
    """A host file that can't be read as a regular file within its bound; `strerror` is the one-line reason."""

    def __init__(self, path: str | os.PathLike[str], reason: str, code: int = errno.EINVAL) -> None:
        super().__init__(code, reason, os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def read_regular(path: str | os.PathLike[str], limit: int, *, follow: bool = True, cut: bool = False) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (see the module docstring)."""
    fd = open_host_file(path, follow=follow)
    try:
        st = os.fstat(fd)
        if st.st_size > limit and not cut:
            raise HostFileError(path, f"it is larger than {_size(limit)} ({_size(st.st_size)}); refused", errno.EFBIG)
        data = _read_at_most(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew since the fstat
        if not cut:
            raise HostFileError(path, f"it is larger than {_size(limit)}; refused", errno.EFBIG)
        data = data[:limit]
    return data


def open_host_file(path: str | os.PathLike[str], *, follow: bool = True) -> int:
    """A read-only descriptor of the regular file at `path`, opened without blocking; HostFileError otherwise."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise HostFileError(path, "it is a symbolic link; refused", errno.ELOOP) from None
        mode = 0
        with contextlib.suppress(OSError):  # a socket can't be opened (ENXIO): say what it is
            mode = os.stat(path, follow_symlinks=follow).st_mode
        if mode and not stat.S_ISREG(mode):
            raise HostFileError(path, f"it is {kind_of(mode)}, not a regular file; refused") from None
        raise HostFileError(path, exc.strerror or str(exc), exc.errno or errno.EIO) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise HostFileError(path, f"it is {kind_of(mode)}, not a regular file; refused")
    return fd


def read_regular_or_none(path: str | os.PathLike[str], limit: int, *, follow: bool = True) -> bytes | None:
    """`read_regular(path, limit, cut=True)`, or None when the file is absent or can't be read (a scan skips it)."""
    try:
        return read_regular(path, limit, follow=follow, cut=True)
    except OSError:
        return None


class RegularFile:
    """A host path whose `read_bytes` is `read_regular`'s: what readers taking a Path-like file (such as
    `validated.reader.read_toml`) are given, so that they read it bounded."""

    def __init__(self, path: str | os.PathLike[str], limit: int = CONFIG_LIMIT) -> None:
        self.path = Path(path)
        self.limit = limit

    @property
    def name(self) -> str:
        return self.path.name

    def read_bytes(self) -> bytes:
        return read_regular(self.path, self.limit)

    def __fspath__(self) -> str:
        return str(self.path)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        try:
            chunk = os.read(fd, min(1 << 20, limit - total))
        except BlockingIOError:  # a regular file never blocks; a file system that says so has nothing more now
            break
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO", "a character device", ...)."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n:,} bytes"
