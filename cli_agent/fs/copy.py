"""Copying a folder for a replay or a candidate: bounded in files and bytes, and never into itself.

    copied = copy_tree(src, dst, limits=CopyLimits(max_files=20_000, max_bytes=512 << 20), skip=(".git",))
    copied.notes   # what was left out: FIFOs, sockets and devices, and the copy itself when `src` holds `dst`

Links are copied as links (never followed), folders and regular files as they are (mode and times kept). A regular
file is read through a descriptor opened without blocking or following a link, and checked to be one. The copy
never descends into `dst` (by device and inode, so another path to it is caught too), so a folder that holds the
copy's destination is copied without it, not into itself. Past a limit it stops with `CopyTooBig`, one line, and
the caller removes what was copied.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Collection
from dataclasses import field
from pathlib import Path

from cli_agent.contracts import dataclass
from cli_agent.fs.hostfile import kind_of

__all__ = ["CopyLimits", "CopyTooBig", "copy_tree"]


class CopyTooBig(Exception):
    """The source is over a limit; the message is one line."""


@dataclass(frozen=True)
class CopyLimits:
    max_files: int = 20_000
    max_bytes: int = 512 << 20


@dataclass
class Copied:
    files: int = 0  # entries copied (files, links and folders)
    size: int = 0  # bytes of regular files copied
    notes: list[str] = field(default_factory=list)


def copy_tree(src: Path, dst: Path, *, limits: CopyLimits = CopyLimits(), skip: Collection[str] = ()) -> Copied:
    """Copy the folder `src` to `dst` (created; must not exist) within `limits`; names in `skip` are left out."""
    os.makedirs(dst)
    st = os.stat(dst)
    copier = _Copier(limits, (st.st_dev, st.st_ino), set(skip))
    try:
        copier.folder(str(src), str(dst), "")
    except RecursionError:
        raise CopyTooBig("its folders nest too deep") from None
    shutil.copystat(src, dst, follow_symlinks=False)
    return copier.done


class _Copier:
    def __init__(self, limits: CopyLimits, target: tuple[int, int], skip: set[str]) -> None:
        self.limits = limits
        self.target = target
        self.skip = skip
        self.done = Copied()

    def folder(self, src: str, dst: str, rel: str) -> None:
        with os.scandir(src) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            if entry.name in self.skip:
                continue
            shown = f"{rel}{entry.name}"
            st = entry.stat(follow_symlinks=False)
            if (st.st_dev, st.st_ino) == self.target:
                self.done.notes.append(f"{shown}/ is where the copy goes: left out")
                continue
            self._count(files=1)
            out = os.path.join(dst, entry.name)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(entry.path), out)
            elif stat.S_ISDIR(st.st_mode):
                os.mkdir(out)
                self.folder(entry.path, out, f"{shown}/")
                shutil.copystat(entry.path, out, follow_symlinks=False)
            elif stat.S_ISREG(st.st_mode):
                self._file(entry.path, out, shown)
            else:
                self.done.notes.append(f"{shown} is {kind_of(st.st_mode)}: not copied")

    def _file(self, src: str, dst: str, shown: str) -> None:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        try:
            fd = os.open(src, flags)
        except OSError as exc:
            self.done.notes.append(f"{shown} could not be read ({exc.strerror}): not copied")
            return
        with os.fdopen(fd, "rb") as reader:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                self.done.notes.append(f"{shown} is {kind_of(st.st_mode)}: not copied")
                return
            self._count(size=st.st_size)
            room = st.st_size + (self.limits.max_bytes - self.done.size) + 1  # a file that grows stops here
            written = 0
            with open(dst, "xb") as writer:
                while chunk := reader.read(min(1 << 20, room - written)):
                    writer.write(chunk)
                    written += len(chunk)
            if written > st.st_size:
                self._count(size=written - st.st_size)
        shutil.copystat(src, dst, follow_symlinks=False)

    def _count(self, *, files: int = 0, size: int = 0) -> None:
        self.done.files += files
        self.done.size += size
        if self.done.files > self.limits.max_files or self.done.size > self.limits.max_bytes:
            raise CopyTooBig(f"it is over {self.limits.max_files:,} files or {self.limits.max_bytes >> 20} MB")
