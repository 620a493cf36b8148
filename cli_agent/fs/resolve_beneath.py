"""Resolving a workspace-relative path one component at a time from the root's file descriptor.

Every folder is opened with `O_NOFOLLOW | O_DIRECTORY` relative to the folder before it, so what is decided is what
the kernel opened, not what a string said. Symbolic links are resolved here, in user space, like `openat2`'s
`RESOLVE_BENEATH`: a link whose target stays inside the workspace is followed (its target is walked the same way,
from the folder holding the link, or from the root for an absolute target naming a place inside); a link leading
outside, a `..` climbing above the root and more than 40 links in one path are refused. `..` inside a link target
pops the folder we actually came through, so it can never climb out.

`follow=False` refuses every symbolic link instead: `Workspace.apply` writes only to canonical paths.
"""

from __future__ import annotations

import os
import stat

from cli_agent.contracts import ToolError, dataclass

__all__ = ["locate_in", "open_dir", "open_regular"]

MAX_LINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Located:
    """Where a path led: the deepest folder reached (open), and what is left below it.

    `tail` is `(leaf,)` when the leaf's folder exists (then `stat` is the leaf's lstat, or None when it is missing),
    longer when folders are missing (`stat` None), and `()` for the root itself.
    """

    dir_fd: int
    dir_parts: tuple[str, ...]
    tail: tuple[str, ...]
    stat: os.stat_result | None

    @property
    def parts(self) -> tuple[str, ...]:
        return self.dir_parts + self.tail

    @property
    def relative(self) -> str:
        return "/".join(self.parts) or "."

    def close(self) -> None:
        os.close(self.dir_fd)

    def __enter__(self) -> Located:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_dir(name: str, dir_fd: int | None = None) -> int:
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def locate(root_fd: int, roots: tuple[str, ...], parts: tuple[str, ...], *, follow: bool = True) -> Located:
    """Walk `parts` (normalised: no "", ".", "..") from `root_fd`; `roots` spell the root for absolute links.

    The caller closes the result.
    """
    stack = [os.dup(root_fd)]
    names: list[str] = []
    todo = list(reversed(parts))
    links = 0
    followed = ""  # the last link followed, named when its target climbs out
    try:
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if not names:
                    raise ToolError(f"{followed}, which leads outside the workspace" if followed
                                    else f"{'/'.join(parts)} climbs above the workspace root")
                os.close(stack.pop())
                names.pop()
                continue
            try:
                st = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
            except FileNotFoundError:
                st = None
            except OSError as exc:
                raise ToolError(f"{'/'.join((*names, name))}: {exc.strerror}") from None
            if st is None:
                tail = tuple(p for p in (name, *reversed(todo)) if p not in ("", "."))
                if ".." in tail:
                    raise ToolError(f"{'/'.join(parts)}: a symbolic link on the way leads to a missing folder")
                return Located(stack.pop(), tuple(names), tail, None)
            if stat.S_ISLNK(st.st_mode):
                shown = "/".join((*names, name))
                if not follow:
                    raise ToolError(f"{shown} is a symbolic link; writes never go through links")
                links += 1
                if links > MAX_LINKS:
                    raise ToolError(f"{'/'.join(parts)}: too many levels of symbolic links (a loop?)")
                try:
                    target = os.readlink(name, dir_fd=stack[-1])
                except OSError as exc:  # no longer a link: changed since the lstat
                    raise ToolError(f"{shown} changed while being opened ({exc.strerror}); try again") from None
                followed = f"{shown} is a symbolic link to {target}"
                if target.startswith("/"):
                    inside = _inside(target, roots)
                    if inside is None:
                        raise ToolError(f"{followed}, which is outside the workspace")
                    while len(stack) > 1:
                        os.close(stack.pop())
                    names.clear()
                    target = inside
                todo.extend(reversed(target.split("/")))
                continue
            if not todo:
                return Located(stack.pop(), tuple(names), (name,), st)
            if not stat.S_ISDIR(st.st_mode):
                raise ToolError(f"{'/'.join((*names, name))} is a file, not a folder")
            try:
                stack.append(open_dir(name, stack[-1]))
            except OSError as exc:  # swapped for a link or a file since the stat: refuse, never follow
                raise ToolError(f"{'/'.join((*names, name))} changed while being opened ({exc.strerror})") from None
            names.append(name)
        if names:  # the path ended on a folder (through a link, or "x/.." in a link): report it as the leaf
            leaf = names.pop()
            st = os.fstat(stack[-1])
            os.close(stack.pop())
            return Located(stack.pop(), tuple(names), (leaf,), st)
        st = os.fstat(stack[0])
        return Located(stack.pop(), (), (), st)
    finally:
        for fd in stack:
            os.close(fd)


def locate_in(root: str, parts: tuple[str, ...], *, follow: bool = True) -> Located:
    """`locate` from the folder at the real path `root` (opened for the call); the caller closes the result."""
    root_fd = open_dir(root)
    try:
        return locate(root_fd, (root,), parts, follow=follow)
    finally:
        os.close(root_fd)


def _inside(target: str, roots: tuple[str, ...]) -> str | None:
    """An absolute link target relative to the root (spelt one of `roots`), or None when not below it."""
    norm = os.path.normpath(target)
    for root in roots:
        if norm == root:
            return "."
        if root == "/":
            return norm.lstrip("/")
        if norm.startswith(root + "/"):
            return norm[len(root) + 1:]
    return None


def open_regular(loc: Located, *, write: bool = False) -> int:
    """Open the leaf of `loc` if it is a regular file; FIFOs, sockets, devices and folders are refused unopened."""
    shown = loc.relative
    st = loc.stat
    if st is None or not loc.tail:
        raise ToolError(f"{shown} does not exist" if st is None else f"{shown} is a folder")
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{shown} is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{shown} is not a regular file ({_kind(st.st_mode)}); refused")
    flags = (os.O_RDWR if write else os.O_RDONLY) | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(loc.tail[-1], flags, dir_fd=loc.dir_fd)
    except OSError as exc:  # ELOOP: swapped for a link since the lstat; never followed
        raise ToolError(f"{shown} changed while being opened ({exc.strerror}); refused") from None
    st2 = os.fstat(fd)
    if not stat.S_ISREG(st2.st_mode) or (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise ToolError(f"{shown} changed while being opened; refused")
    return fd


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"
