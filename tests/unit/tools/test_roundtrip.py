"""Files keep their format through the mutating tools: only the edited bytes change."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs import textfile
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.handlers import files


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "ws").mkdir()
    return Workspace(tmp_path / "ws")


@pytest.fixture
def ctx(ws: Workspace) -> ToolContext:
    return ToolContext(ws)


def edited(ws: Workspace, ctx: ToolContext, name: str, data: bytes, old: str, new: str) -> bytes:
    (ws.root / name).write_bytes(data)
    ws.apply(files.edit_file(ctx, name, old, new))
    return (ws.root / name).read_bytes()


@pytest.mark.parametrize(("data", "old", "new", "expected"), [
    # CRLF: an LF-only `old` matches, the new text gets CRLF
    (b"one\r\ntwo\r\nthree\r\n", "one\ntwo", "uno\ndos\ndos bis", b"uno\r\ndos\r\ndos bis\r\nthree\r\n"),
    # mixed: each replaced region keeps its own ending, the rest is untouched
    (b"a\r\nb\nc\r\nd\n", "b\n", "B\nB2\n", b"a\r\nB\nB2\nc\r\nd\n"),
    (b"a\r\nb\nc\r\nd\n", "c\n", "C\nC2\n", b"a\r\nb\nC\r\nC2\r\nd\n"),
    # no final newline: stays without one, even when `old` ends with a newline the file lacks
    (b"first\nlast", "last", "LAST", b"first\nLAST"),
    (b"first\nlast", "last\n", "LAST\n", b"first\nLAST"),
    (b"first\r\nlast", "first\nlast\n", "1\n2\n", b"1\r\n2"),
    # UTF-8 with BOM
    (codecs.BOM_UTF8 + "héllo\r\nwörld\r\n".encode(), "wörld", "welt ✓",
     codecs.BOM_UTF8 + "héllo\r\nwelt ✓\r\n".encode()),
    # Latin-1 (not UTF-8): bytes stay Latin-1
    ("café\nnaïve\n".encode("latin-1"), "naïve", "déjà", "café\ndéjà\n".encode("latin-1")),
    # cp1252 smart quotes
    ("say “hi”\nbye\n".encode("cp1252"), "bye", "ciao", "say “hi”\nciao\n".encode("cp1252")),
    # UTF-16 LE and BE with BOM
    (codecs.BOM_UTF16_LE + "a\r\nb\r\n".encode("utf-16-le"), "b", "β",
     codecs.BOM_UTF16_LE + "a\r\nβ\r\n".encode("utf-16-le")),
    (codecs.BOM_UTF16_BE + "a\nb\n".encode("utf-16-be"), "a", "α",
     codecs.BOM_UTF16_BE + "α\nb\n".encode("utf-16-be")),
    # a lone CR is content, not a line ending
    (b"a\rb\nc\n", "c", "C", b"a\rb\nC\n"),
])
def test_edit_keeps_every_byte_outside_the_edit(ws: Workspace, ctx: ToolContext, data: bytes, old: str, new: str,
                                                expected: bytes) -> None:
    assert edited(ws, ctx, "f.txt", data, old, new) == expected


def test_mode_and_crlf_survive_edit_and_write(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "run.sh").write_bytes(b"#!/bin/sh\r\necho hi\r\n")
    os.chmod(ws.root / "run.sh", 0o755)
    ws.apply(files.edit_file(ctx, "run.sh", "echo hi", "echo bye"))
    assert (ws.root / "run.sh").read_bytes() == b"#!/bin/sh\r\necho bye\r\n"
    assert stat.S_IMODE((ws.root / "run.sh").stat().st_mode) == 0o755
    ws.apply(files.write_file(ctx, "run.sh", "#!/bin/sh\nexit 0\n"))
    assert (ws.root / "run.sh").read_bytes() == b"#!/bin/sh\r\nexit 0\r\n"
    assert stat.S_IMODE((ws.root / "run.sh").stat().st_mode) == 0o755


def test_write_file_keeps_bom_and_encoding(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "bom.txt").write_bytes(codecs.BOM_UTF8 + b"old\n")
    ws.apply(files.write_file(ctx, "bom.txt", "néw\n"))
    assert (ws.root / "bom.txt").read_bytes() == codecs.BOM_UTF8 + "néw\n".encode()
    (ws.root / "l1.txt").write_bytes("vieux é\n".encode("latin-1"))
    ws.apply(files.write_file(ctx, "l1.txt", "neuf à\n"))
    assert (ws.root / "l1.txt").read_bytes() == "neuf à\n".encode("latin-1")


def test_read_shows_lf_and_never_a_replacement_character(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "w.txt").write_bytes(codecs.BOM_UTF8 + b"a\r\nb\r\n")
    result = files.read_file(ctx, "w.txt")
    assert result["content"] == "a\nb\n" and "CRLF" in result["notice"] and "BOM" in result["notice"]
    (ws.root / "l.txt").write_bytes(b"caf\xe9\n")
    assert files.read_file(ctx, "l.txt")["content"] == "café\n"


@pytest.mark.parametrize("bad", ["\udc80", "ok \ud800 not ok"])
def test_a_lone_surrogate_fails_cleanly(ws: Workspace, ctx: ToolContext, bad: str) -> None:
    (ws.root / "f.txt").write_bytes(b"keep me\n")
    with pytest.raises(ToolError, match="lone surrogate"):
        files.edit_file(ctx, "f.txt", "keep", bad)
    with pytest.raises(ToolError, match="lone surrogate"):
        files.write_file(ctx, "f.txt", bad)
    with pytest.raises(ToolError, match="lone surrogate"):
        files.create_file(ctx, "g.txt", bad)
    assert (ws.root / "f.txt").read_bytes() == b"keep me\n"
    assert sorted(os.listdir(ws.root)) == ["f.txt"]


def test_a_character_the_encoding_lacks_fails_cleanly(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "l1.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ToolError, match="latin-1 can't represent"):
        files.edit_file(ctx, "l1.txt", "café", "café ☕")
    assert (ws.root / "l1.txt").read_bytes() == b"caf\xe9\n"


def test_shift_jis_is_readable_but_refused_for_edits(ws: Workspace, ctx: ToolContext) -> None:
    data = "こんにちは、世界\nさようなら\n".encode("shift_jis")
    (ws.root / "jp.txt").write_bytes(data)
    assert files.read_file(ctx, "jp.txt")["content"] == "こんにちは、世界\nさようなら\n"
    with pytest.raises(ToolError, match=r"shift_jis.*can't be edited"):
        files.edit_file(ctx, "jp.txt", "さようなら", "またね")
    with pytest.raises(ToolError, match="can't be edited"):
        files.write_file(ctx, "jp.txt", "x\n")
    assert (ws.root / "jp.txt").read_bytes() == data


def test_write_file_on_a_file_changed_since_read_is_refused_by_apply(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "f.txt").write_bytes(b"v1\n")
    change = files.write_file(ctx, "f.txt", "v2 from the model\n")
    (ws.root / "f.txt").write_bytes(b"v1 edited by the user\n")
    with pytest.raises(ToolError, match="changed on disk since it was read; read it again"):
        ws.apply(change)
    assert (ws.root / "f.txt").read_bytes() == b"v1 edited by the user\n"


def test_detection_table() -> None:
    cases = {
        b"plain\n": ("utf-8", b"", "\n", False, True),
        b"a\r\nb": ("utf-8", b"", "\r\n", False, False),
        b"a\r\nb\n": ("utf-8", b"", "\n", True, True),
        codecs.BOM_UTF8 + b"x": ("utf-8", codecs.BOM_UTF8, "\n", False, False),
        codecs.BOM_UTF32_LE + "x\n".encode("utf-32-le"): ("utf-32-le", codecs.BOM_UTF32_LE, "\n", False, True),
        b"caf\xe9": ("latin-1", b"", "\n", False, False),
    }
    for data, (enc, bom, newline, mixed, final) in cases.items():
        fmt = textfile.detect(data)
        assert fmt is not None and (fmt.encoding, fmt.bom, fmt.newline, fmt.mixed, fmt.final_newline) == (
            enc, bom, newline, mixed, final), data
        assert textfile.encode(textfile.decode(data, fmt), fmt) == data
    for binary in (b"\x00\x01\x02", b"\x89PNG\r\n\x1a\n\x00", bytes(range(1, 32)) * 10, codecs.BOM_UTF8 + b"\xff"):
        assert textfile.detect(binary) is None


_LINE = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)  # controls: binary


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_LINE, min_size=1, max_size=8), endings=st.lists(st.sampled_from(["\n", "\r\n"]), min_size=8,
       max_size=8), final=st.booleans(), bom=st.booleans(), which=st.integers(0, 7), new=_LINE)
def test_property_only_the_edited_line_changes(tmp_path_factory: pytest.TempPathFactory, lines: list[str],
                                              endings: list[str], final: bool, bom: bool, which: int,
                                              new: str) -> None:
    which %= len(lines)
    marker = f"<<{which}>>"
    lines = [f"{line}<<{i}>>" for i, line in enumerate(lines)]
    body = "".join(line + (endings[i] if i < len(lines) - 1 or final else "") for i, line in enumerate(lines))
    data = (codecs.BOM_UTF8 if bom else b"") + body.encode("utf-8")
    root = tmp_path_factory.mktemp("prop")
    ws = Workspace(root)
    (root / "f.txt").write_bytes(data)
    ws.apply(files.edit_file(ToolContext(ws), "f.txt", marker, new + "@@"))
    expected = data.replace(marker.encode(), (new + "@@").encode(), 1)
    assert (root / "f.txt").read_bytes() == expected
