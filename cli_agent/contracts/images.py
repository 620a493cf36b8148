"""Images in the conversation: what one is (`ImagePart`), and its type and size read from the file's header.

An image goes to a vision model as an image part (a data URL); the transcript, the trace and a resumed session keep
only its label, `[image: shot.png 1280×720]`, never the bytes. Reading the header needs no imaging library: PNG,
GIF, JPEG and WebP say their size in their first bytes (JPEG's in the first start-of-frame segment). An image over
the limits is downscaled when Pillow is installed (`pip install 'cli-agent[images]'`), else refused naming the limit.
What is decoded is bounded, not what the header says: a GIF whose frame is larger than its header's screen is
measured by the frame, before any pixel is decoded, and only the first frame is ever decoded.
"""

from __future__ import annotations

import base64
import io
import struct
import warnings
from typing import Any

from cli_agent.contracts.records import dataclass

__all__ = ["IMAGE_SUFFIXES", "MAX_SOURCE_BYTES", "ImagePart", "image_from_bytes", "image_kind"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # Anthropic's limit for one image (OpenAI's is larger): what every provider takes
MAX_IMAGE_SIDE = 8000  # pixels on the longer side: Anthropic refuses more
MAX_SOURCE_BYTES = 64 * 1024 * 1024  # the most of a file read to downscale it
MAX_DECODED_PIXELS = 40_000_000  # decoded (to downscale) only below this (160 MB as RGBA): a bomb costs nothing
_SHRINK_STEPS = 6  # each a quarter smaller: a downscale is a bounded number of encodings


@dataclass(frozen=True)
class ImagePart:
    """One image of a message: its name (as the user or the model gave it), type and size, and its bytes (None
    once read back from a trace, which keeps the label only)."""

    name: str
    media_type: str
    width: int
    height: int
    data: bytes | None = None

    @property
    def label(self) -> str:
        return f"[image: {self.name} {self.width}×{self.height}]"

    def to_openai(self) -> dict[str, Any]:
        """The chat-completions content part: the image as a data URL, or its label when the bytes are gone."""
        if self.data is None:
            return {"type": "text", "text": "\n" + self.label}
        url = f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"
        return {"type": "image_url", "image_url": {"url": url}}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "media_type": self.media_type, "width": self.width, "height": self.height}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImagePart:
        return cls(str(data.get("name", "image")), str(data.get("media_type", "image/png")),
                   int(data.get("width", 0)), int(data.get("height", 0)))


def image_kind(data: bytes) -> tuple[str, int, int] | None:
    """(media type, width, height) of a PNG, GIF, JPEG or WebP image from its header; None for anything else."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return "image/png", width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return "image/gif", width, height
    if data[:2] == b"\xff\xd8":
        return _jpeg(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp(data)
    return None


_JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg(data: bytes) -> tuple[str, int, int] | None:
    """The size in the first start-of-frame segment, walking the segments (each says its length): linear."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2:at + 4])
        if marker in _JPEG_FRAMES and at + 9 <= len(data):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return "image/jpeg", width, height
        if length < 2:
            return None
        at += 2 + length
    return None


def _webp(data: bytes) -> tuple[str, int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return "image/webp", width, height
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return "image/webp", width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return "image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def image_from_bytes(name: str, data: bytes) -> ImagePart:
    """The image part of a file's bytes, downscaled when it is over the limits and Pillow is installed; ValueError
    (one line, the limit named) when it is not a PNG, JPEG, GIF or WebP image, or is too large and cannot be made
    smaller here."""
    kind = image_kind(data)
    if kind is None:
        raise ValueError(f"{name} is not a PNG, JPEG, GIF or WebP image")
    media_type, width, height = kind
    if min(width, height) < 1:
        raise ValueError(f"{name} says it is {width}×{height} pixels: not an image a model can take")
    if len(data) <= MAX_IMAGE_BYTES and max(width, height) <= MAX_IMAGE_SIDE:
        return ImagePart(name, media_type, width, height, data)
    limits = f"images are limited to {MAX_IMAGE_BYTES // 1024 // 1024} MB and {MAX_IMAGE_SIDE} pixels a side"
    size = f"{len(data) / 1024 / 1024:.1f} MB, {width}×{height}"
    if width * height > MAX_DECODED_PIXELS or len(data) > MAX_SOURCE_BYTES:
        raise ValueError(f"{name} is {size}: {limits}, and it is too large to downscale here")
    try:
        from PIL import Image  # deferred: Pillow, only for an image over the limits
    except ImportError:
        raise ValueError(f"{name} is {size}: {limits} (pip install 'cli-agent[images]' to have it downscaled)"
                         ) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # we bound it below, more tightly
            opened = Image.open(io.BytesIO(data))
        with opened:
            decoded = _decoded_pixels(opened)
            if decoded > MAX_DECODED_PIXELS:  # a frame larger than the header says: refused before it is decoded
                raise _TooLarge(f"{name} is {size}: {limits}, and it decodes to {opened.size[0]}×{opened.size[1]} "
                                "pixels: too large to downscale here")
            opened.draft("RGB", (MAX_IMAGE_SIDE, MAX_IMAGE_SIDE))  # a JPEG decodes at a smaller scale directly
            image = opened.convert("RGBA" if media_type == "image/png" else "RGB")
    except _TooLarge as exc:
        raise ValueError(str(exc)) from None
    except Exception:  # Pillow's errors for a damaged file (a decompression bomb too) are many: "cannot be read"
        raise ValueError(f"{name} is {size}: {limits}, and it cannot be read to downscale it") from None
    smaller = _downscaled(image, media_type)
    if smaller is None:
        raise ValueError(f"{name} is {size}: {limits}, and it stays too large when downscaled")
    media_type, width, height, data = smaller
    return ImagePart(name, media_type, width, height, data)


class _TooLarge(Exception):
    pass


def _decoded_pixels(opened: Any) -> int:
    """The pixels decoding `opened`'s (first, the only decoded) frame costs: its canvas (Pillow grows it to a frame
    larger than the header's size) or any tile of it, whichever is larger."""
    width, height = opened.size
    tiles = [(t[1][2] - t[1][0]) * (t[1][3] - t[1][1]) for t in getattr(opened, "tile", ()) or ()]
    return max([width * height, *tiles])


def _downscaled(image: Any, media_type: str) -> tuple[str, int, int, bytes] | None:
    """A decoded (Pillow) image within the limits (a PNG stays PNG while it fits, else JPEG), in a bounded number of
    encodings; None when it stays too large."""
    side = min(MAX_IMAGE_SIDE, max(image.size))
    for _ in range(_SHRINK_STEPS):
        image.thumbnail((side, side))
        for fmt, out_type, options in (("PNG", "image/png", {"optimize": True}), ("JPEG", "image/jpeg",
                                                                                   {"quality": 85})):
            if fmt == "PNG" and media_type != "image/png":
                continue
            buffer = io.BytesIO()
            (image if fmt == "PNG" else image.convert("RGB")).save(buffer, fmt, **options)
            if buffer.tell() <= MAX_IMAGE_BYTES:
                return out_type, image.size[0], image.size[1], buffer.getvalue()
        side = side * 3 // 4
    return None
