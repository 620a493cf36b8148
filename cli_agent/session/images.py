"""The images a user gives a run: `@shot.png` in the task (read through the workspace, like any `@file`) and
`--image FILE` (a file the user named on the command line). Each becomes an image part of the task's message, and
its label (`[image: shot.png 1280×720]`) is added to the task's text, which is what the transcript, the trace and a
resumed session show: never the bytes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.contracts import errors
from cli_agent.contracts.images import IMAGE_SUFFIXES, MAX_SOURCE_BYTES, ImagePart, image_from_bytes

if TYPE_CHECKING:
    from cli_agent.fs.workspace import Workspace
    from cli_agent.providers.base import Provider

__all__ = ["image_refs", "images_for", "is_image_path", "with_images"]

_REF = re.compile(r'(?:^|(?<=\s))@(?:"([^"]+)"|([^\s"]+))')
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


def _from_workspace(workspace: Workspace, path: str) -> ImagePart:
    try:
        data = workspace.read_bytes(path, limit=MAX_SOURCE_BYTES + 1)
    except errors.CliAgentError as exc:
        raise errors.UsageError(f"cannot attach @{path}: {exc}") from exc
    except OSError as exc:
        raise errors.UsageError(f"cannot attach @{path}: {exc.strerror or exc}") from exc
    return _part(path, data)


def _from_host(path: str) -> ImagePart:
    """A file the user named with --image: read at most one byte past the limit (a huge file costs nothing)."""
    try:
        with open(Path(path).expanduser(), "rb") as file:
            data = file.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise errors.UsageError(f"cannot read --image {path}: {exc.strerror or exc}") from exc
    return _part(Path(path).name, data)


def _part(name: str, data: bytes) -> ImagePart:
    try:
        return image_from_bytes(name, data)
    except ValueError as exc:
        raise errors.UsageError(str(exc)) from None


def images_for(text: str, workspace: Workspace, files: Sequence[str] = (),
               provider: Provider | None = None) -> tuple[ImagePart, ...]:
    """The images of a task: its `@image` references and the `files` given with --image. A UsageError (one line)
    for an image that cannot be read, is too large, is not an image, or goes to a model without vision."""
    images = tuple(_from_workspace(workspace, p) for p in image_refs(text)) + tuple(_from_host(f) for f in files)
    supports = getattr(provider, "supports_images", None)
    if images and callable(supports) and not supports():
        name = getattr(provider, "name", "this model")
        raise errors.UsageError(f"{name} takes no images (the model has no vision): use a vision model or leave "
                                "the image out")
    return images


def with_images(text: str, images: Sequence[ImagePart]) -> str:
    """The task's text with the images' labels: what the transcript and a resumed session show of them."""
    if not images:
        return text
    return text + "\n\n" + " ".join(i.label for i in images)
