"""The images a user gives a run: `@shot.png` in the task (read through the workspace, like any `@file`),
`--image FILE` (a file the user named on the command line), and, for a model with vision, the path of an image
file pasted or dropped into the message (`/home/me/Desktop/shot.png`, quoted or with a backslash before each space,
as terminals paste them). Each becomes an image part of the task's message, and
its label (`[image: shot.png 1280×720]`) is added to the task's text, which is what the transcript, the trace and a
resumed session show: never the bytes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.contracts import IMAGE_SUFFIXES, MAX_SOURCE_BYTES, ImagePart, ToolError, errors, image_from_bytes
from cli_agent.fs import read_regular

if TYPE_CHECKING:
    from cli_agent.fs import Workspace
    from cli_agent.providers import Provider

__all__ = ["images_for", "with_images"]

_REF = re.compile(r'(?:^|(?<=\s))@(?:"([^"]+)"|([^\s"]+))')
# An absolute or home path as a terminal pastes a dropped file: quoted, or with its spaces escaped
_PASTED = re.compile(r"""(?:^|(?<=\s))(?:'((?:/|~/)[^']+)'|"((?:/|~/)[^"]+)"|((?:/|~/)(?:[^\s\\'"]|\\.)+))""")
_MAX_PASTED = 8  # paths looked at in one message
_TRAILING = ".,;:!?)]}'"


def is_image_path(path: str) -> bool:
    return path.lower().endswith(IMAGE_SUFFIXES)


def image_refs(text: str) -> list[str]:
    """The image paths named `@path.png` (or `@"path with spaces.jpg"`) in the text, each once, in order."""
    found: list[str] = []
    for match in _REF.finditer(text):
        path = match.group(1) or match.group(2).rstrip(_TRAILING)
        if path and is_image_path(path) and path not in found:
            found.append(path)
    return found


def pasted_paths(text: str) -> list[str]:
    """The image files whose absolute (or `~/`) paths are pasted in the text and exist, each once, in order."""
    found: list[str] = []
    for match in _PASTED.finditer(text):
        raw = match.group(1) or match.group(2) or re.sub(r"\\(.)", r"\1", match.group(3))
        path = raw.rstrip(_TRAILING) if match.group(3) else raw
        if is_image_path(path) and path not in found and Path(path).expanduser().is_file():
            found.append(path)
        if len(found) >= _MAX_PASTED:
            break
    return found


def _from_workspace(workspace: Workspace, path: str) -> ImagePart:
    try:
        data = workspace.read_bytes(path, limit=MAX_SOURCE_BYTES + 1)
    except (errors.CliAgentError, ToolError) as exc:  # outside the workspace, a secret, missing: the workspace says
        raise errors.UsageError(f"cannot attach @{path}: {exc}") from exc
    except OSError as exc:
        raise errors.UsageError(f"cannot attach @{path}: {exc.strerror or exc}") from exc
    return _part(path, data)


def _from_host(path: str) -> ImagePart:
    """A file the user named with --image, through the host files' opener (a regular file, opened without blocking:
    a FIFO or a device is refused at once): at most one byte past the limit is read (a huge file costs nothing)."""
    try:
        data = read_regular(Path(path).expanduser(), MAX_SOURCE_BYTES + 1, cut=True)
    except OSError as exc:
        raise errors.UsageError(f"cannot read the image {path}: {exc.strerror or exc}") from exc
    return _part(Path(path).name, data)


def _part(name: str, data: bytes) -> ImagePart:
    try:
        return image_from_bytes(name, data)
    except ValueError as exc:
        raise errors.UsageError(str(exc)) from None


def images_for(text: str, workspace: Workspace, files: Sequence[str] = (),
               provider: Provider | None = None) -> tuple[ImagePart, ...]:
    """The images of a task: its `@image` references, the `files` given with --image and, for a model with vision,
    image paths pasted in it. A UsageError (one line) for an image that cannot be read, is too large, is not an
    image, or goes to a model without vision (a pasted path then stays text)."""
    supports = getattr(provider, "supports_images", None)
    sees = not callable(supports) or bool(supports())
    named = list(dict.fromkeys([*files, *(pasted_paths(text) if sees else ())]))
    images = tuple(_from_workspace(workspace, p) for p in image_refs(text)) + tuple(_from_host(f) for f in named)
    if images and not sees:
        name = getattr(provider, "name", "this model")
        raise errors.UsageError(f"{name} takes no images (the model has no vision): use a vision model or leave "
                                "the image out")
    return images


def with_images(text: str, images: Sequence[ImagePart]) -> str:
    """The task's text with the images' labels: what the transcript and a resumed session show of them."""
    if not images:
        return text
    return text + "\n\n" + " ".join(i.label for i in images)
