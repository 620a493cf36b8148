"""Image sizes read from the headers of PNG, GIF, JPEG and WebP files; the bounds; the label kept in traces."""

from __future__ import annotations

import struct

import pytest

from cli_agent.contracts.images import ImagePart, image_from_bytes, image_kind
from cli_agent.contracts.messages import Message

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + struct.pack(">II", 1280, 720) + b"\x08\x06\x00\x00\x00"
GIF = b"GIF89a" + struct.pack("<HH", 320, 200) + b"\x00" * 8
JPEG = (b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
        + b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 600, 800) + b"\x03" + b"\x00" * 9)
WEBP_LOSSY = b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 7 + b"\x9d\x01\x2a" + struct.pack("<HH", 640, 480)
WEBP_LOSSLESS = b"RIFF\x00\x00\x00\x00WEBPVP8L" + b"\x00" * 4 + b"\x2f" + ((99) | (49 << 14)).to_bytes(4, "little")
WEBP_EXTENDED = (b"RIFF\x00\x00\x00\x00WEBPVP8X" + b"\x00" * 8 + (1999).to_bytes(3, "little")
                 + (999).to_bytes(3, "little"))


@pytest.mark.parametrize(("data", "kind"), [
    (PNG, ("image/png", 1280, 720)), (GIF, ("image/gif", 320, 200)), (JPEG, ("image/jpeg", 800, 600)),
    (WEBP_LOSSY, ("image/webp", 640, 480)), (WEBP_LOSSLESS, ("image/webp", 100, 50)),
    (WEBP_EXTENDED, ("image/webp", 2000, 1000)),
])
def test_the_size_comes_from_the_header(data, kind):
    assert image_kind(data) == kind


@pytest.mark.parametrize("data", [b"", b"hello", b"\xff\xd8\xff", b"\xff\xd8" + b"\xff\xe0\x00\x00" * 4,
                                  b"RIFF\x00\x00\x00\x00WEBPVP8Z", PNG[:20]])
def test_anything_else_is_not_an_image(data):
    assert image_kind(data) is None


def test_the_bounds_are_named():
    with pytest.raises(ValueError, match="limited to 5 MB and 8000 pixels a side, and it cannot be read to downscale"):
        image_from_bytes("big.png", PNG + b"\x00" * (5 * 1024 * 1024))  # a header and no pixels
    with pytest.raises(ValueError, match="limited to 5 MB and 8000 pixels a side, and it is too large to downscale"):
        image_from_bytes("bomb.gif", b"GIF89a" + struct.pack("<HH", 65000, 65000) + b"\x00" * 8)
    with pytest.raises(ValueError, match="not a PNG, JPEG, GIF or WebP image"):
        image_from_bytes("notes.png", b"plain text")
    with pytest.raises(ValueError, match="0×10 pixels"):
        image_from_bytes("flat.gif", b"GIF89a" + struct.pack("<HH", 0, 10) + b"\x00" * 8)


def encoded(image, fmt: str, **options) -> bytes:
    import io

    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def test_an_image_over_the_limits_is_downscaled_with_pillow():
    pil = pytest.importorskip("PIL.Image")
    wide = image_from_bytes("wide.png", encoded(pil.new("RGB", (9000, 300), "red"), "PNG"))
    assert (wide.media_type, wide.width, wide.height) == ("image/png", 8000, 267)
    assert image_kind(wide.data or b"") == ("image/png", 8000, 267)
    noise = pil.effect_noise((2600, 2600), 100).convert("RGB")  # incompressible: 20 MB as a PNG
    heavy = encoded(noise, "PNG")
    assert len(heavy) > 5 * 1024 * 1024
    shot = image_from_bytes("shot.png", heavy)
    assert len(shot.data or b"") <= 5 * 1024 * 1024 and max(shot.width, shot.height) <= 2600
    assert image_kind(shot.data or b"")[0] == shot.media_type


def test_a_message_round_trips_with_the_label_and_never_the_bytes():
    image = image_from_bytes("shot.png", PNG)
    message = Message("user", "look", images=(image,))
    sent = message.to_openai()["content"]
    assert sent[0] == {"type": "text", "text": "look"}
    assert sent[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    saved = message.to_dict()
    assert saved["images"] == [{"name": "shot.png", "media_type": "image/png", "width": 1280, "height": 720}]
    back = Message.from_dict(saved)
    assert back.images == (ImagePart("shot.png", "image/png", 1280, 720),)
    assert back.to_openai()["content"][1] == {"type": "text", "text": "\n[image: shot.png 1280×720]"}


def test_thinking_blocks_round_trip_unchanged():
    block = {"type": "thinking", "thinking": "plan", "signature": "sig"}
    message = Message("assistant", None, thinking_blocks=(block,))
    assert message.to_openai()["thinking_blocks"] == [block]
    assert Message.from_dict(message.to_dict()).thinking_blocks == (block,)
    assert "thinking_blocks" not in Message("assistant", "hi").to_openai()


def test_a_gif_whose_frame_is_larger_than_its_header_is_refused_before_it_is_decoded():
    pil = pytest.importorskip("PIL.Image")
    import io
    import resource
    buffer = io.BytesIO()
    pil.new("P", (1, 1)).save(buffer, "GIF")
    data = bytearray(buffer.getvalue())
    data[6:10] = struct.pack("<HH", 8001, 1)  # the header: 8001×1, over the side limit, "cheap" to downscale
    frame = data.index(b"\x2c")  # the image descriptor: the frame Pillow decodes is 13000×13000
    data[frame + 5:frame + 9] = struct.pack("<HH", 13000, 13000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ValueError, match=r"8001×1: .* decodes to 13000×13000 pixels: too large to downscale here"):
        image_from_bytes("bomb.gif", bytes(data))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024  # KB: nothing was decoded
