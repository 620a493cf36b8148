"""The images of a task: `@refs` through the workspace, --image files, pasted image paths for a vision model."""

from __future__ import annotations

import struct

import pytest

from cli_agent.contracts.errors import UsageError
from cli_agent.fs.workspace import Workspace
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.images import image_refs, images_for, pasted_paths, with_images

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + struct.pack(">II", 10, 20) + b"\x08\x06\x00\x00\x00" + b"\x00" * 16


@pytest.fixture
def files(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "shot.png").write_bytes(PNG)
    (tmp_path / "Desktop").mkdir()
    (tmp_path / "Desktop" / "my shot.png").write_bytes(PNG)
    (tmp_path / "Desktop" / "plain.png").write_bytes(PNG)
    return tmp_path


def test_refs_are_images_only_each_once():
    assert image_refs('see @shot.png, @a.py and @"my shot.JPG" then @shot.png') == ["shot.png", "my shot.JPG"]


def test_pasted_paths_as_terminals_paste_them(files):
    desk = files / "Desktop"
    text = (f"why? {desk}/my\\ shot.png and '{desk}/my shot.png' and {desk}/plain.png. "
            f"{desk}/missing.png {desk}/notes.txt relative/x.png")
    assert pasted_paths(text) == [f"{desk}/my shot.png", f"{desk}/plain.png"]


def test_a_vision_model_gets_every_image_and_a_blind_one_keeps_pasted_paths_as_text(files):
    ws = Workspace(files / "ws")
    text = f"compare @shot.png with {files}/Desktop/plain.png"
    seen = images_for(text, ws, provider=ScriptedProvider([]))
    assert [(i.name, i.width, i.height) for i in seen] == [("shot.png", 10, 20), ("plain.png", 10, 20)]
    assert with_images("hi", seen) == "hi\n\n[image: shot.png 10×20] [image: plain.png 10×20]"
    blind = ScriptedProvider([], vision=False)
    assert images_for(f"look at {files}/Desktop/plain.png", ws, provider=blind) == ()
    with pytest.raises(UsageError, match="takes no images"):
        images_for("look at @shot.png", ws, provider=blind)


def test_an_image_outside_the_workspace_cannot_be_named_with_an_at(files):
    with pytest.raises(UsageError, match=r"cannot attach @\.\./Desktop/plain\.png: .* climbs out of the workspace"):
        images_for("@../Desktop/plain.png", Workspace(files / "ws"))


@pytest.mark.slow
def test_a_fifo_given_with_image_is_refused_at_once_through_the_cli(tmp_path):
    import os
    import time

    from clikit import cli
    fifo = tmp_path / "shot.png"
    os.mkfifo(fifo)  # no writer: a plain open() would wait for one forever
    (tmp_path / "ws").mkdir()
    script = tmp_path / "model.json"
    script.write_text('[{"text": "never asked"}]')
    started = time.monotonic()
    result = cli(["-p", "what is this?", "--image", str(fifo), "-m", f"scripted:{script}", "-C", str(tmp_path / "ws")],
                 home=tmp_path / "home", timeout=30)
    assert time.monotonic() - started < 15
    assert result.returncode == 2, result.stderr
    said = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and "shot.png" in said[0] and "FIFO" in said[0].upper(), result.stderr
