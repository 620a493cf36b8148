"""Adversarial encodings: a CRLF file edited with LF-only text, BOMs, Latin-1, Shift-JIS, invalid UTF-8, a lone
surrogate. A file either round-trips exactly (every byte outside the edit kept) or is refused, never gets U+FFFD."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_agent.contracts.envelope import Envelope
from cli_agent.contracts.messages import ToolCall
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.dispatch import Dispatcher
from cli_agent.tools.registry import Registry

FUZZ_EXAMPLES = 150


def call(root: Path, tool: str, **args: object) -> Envelope:
    d = Dispatcher(Registry.builtin(), ToolContext(Workspace(root)))
    return d.execute(d.prepare(ToolCall("c", tool, args, json.dumps(args))))


def test_crlf_file_edited_with_lf_only_old_and_new(tmp_path: Path) -> None:
    (tmp_path / "w.bat").write_bytes(b"@echo off\r\nset A=1\r\nset B=2\r\necho done")  # no final newline
    read = call(tmp_path, "read_file", path="w.bat")
    assert read.data["content"] == "@echo off\nset A=1\nset B=2\necho done" and "CRLF" in read.data["notice"]
    assert call(tmp_path, "edit_file", path="w.bat", old="set A=1\nset B=2\n", new="set A=10\nset B=20\nset C=3\n").ok
    assert (tmp_path / "w.bat").read_bytes() == b"@echo off\r\nset A=10\r\nset B=20\r\nset C=3\r\necho done"


def test_mixed_line_endings_outside_the_edit_are_kept(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_bytes(b"a\r\nb\nc\r\nd\n")
    assert call(tmp_path, "edit_file", path="m.txt", old="b", new="B").ok
    assert (tmp_path / "m.txt").read_bytes() == b"a\r\nB\nc\r\nd\n"


@pytest.mark.parametrize(("bom", "codec"), [(b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"),
                                            (b"\xfe\xff", "utf-16-be")])
def test_a_bom_survives_edit_and_write(tmp_path: Path, bom: bytes, codec: str) -> None:
    (tmp_path / "b.txt").write_bytes(bom + "naïve\r\ncafé\r\n".encode(codec))
    assert call(tmp_path, "edit_file", path="b.txt", old="café", new="thé").ok
    assert (tmp_path / "b.txt").read_bytes() == bom + "naïve\r\nthé\r\n".encode(codec)
    assert call(tmp_path, "write_file", path="b.txt", content="one\ntwo\n").ok
    assert (tmp_path / "b.txt").read_bytes() == bom + "one\r\ntwo\r\n".encode(codec)


def test_latin_1_round_trips_byte_for_byte(tmp_path: Path) -> None:
    original = "Größe: 10 €uro? no: 10 Euro, café, señor\n".replace("€", "").encode("latin-1")
    (tmp_path / "l.txt").write_bytes(original + b"second line\n")
    read = call(tmp_path, "read_file", path="l.txt")
    assert "café" in read.data["content"] and "\ufffd" not in read.data["content"]
    assert call(tmp_path, "edit_file", path="l.txt", old="second", new="zweite Größe").ok
    assert (tmp_path / "l.txt").read_bytes() == original + "zweite Größe line\n".encode("latin-1")
    refused = call(tmp_path, "edit_file", path="l.txt", old="zweite", new="日本")  # latin-1 can't hold it
    assert not refused.ok and "can't represent" in refused.errors[0]


def test_shift_jis_is_read_without_u_fffd_and_refused_for_edits(tmp_path: Path) -> None:
    data = "こんにちは、世界。カタカナとひらがな\n二行目\n".encode("shift_jis")
    (tmp_path / "j.txt").write_bytes(data)
    read = call(tmp_path, "read_file", path="j.txt")
    assert read.ok and "こんにちは" in read.data["content"] and "\ufffd" not in read.data["content"]
    for tool, args in (("edit_file", {"old": "二行目", "new": "2"}), ("write_file", {"content": "x\n"})):
        envelope = call(tmp_path, tool, path="j.txt", **args)
        assert not envelope.ok and "can't be edited faithfully" in envelope.errors[0]
    assert (tmp_path / "j.txt").read_bytes() == data


def test_invalid_utf8_round_trips_or_is_refused_never_u_fffd(tmp_path: Path) -> None:
    cases = [b"ok \xff\xfe broken \x80\x81 utf-8\nline two\n", b"\xc3\x28 overlong \xc0\xaf\nline two\n",
             b"cp1252 \x93quoted\x94 \x80\nline two\n", b"\xed\xa0\x80 surrogate bytes\nline two\n"]
    for n, data in enumerate(cases):
        name = f"bad{n}.txt"
        (tmp_path / name).write_bytes(data)
        read = call(tmp_path, "read_file", path=name)
        assert read.ok and "\ufffd" not in read.data["content"], (data, read)
        edited = call(tmp_path, "edit_file", path=name, old="line two", new="line 2")
        if edited.ok:
            assert (tmp_path / name).read_bytes() == data.replace(b"line two", b"line 2")
        else:
            assert "can't be edited" in edited.errors[0] and (tmp_path / name).read_bytes() == data


def test_a_lone_surrogate_in_model_content_fails_before_any_byte_is_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    raw = '{"path": "a.txt", "content": "bad \\ud800 char"}'
    args = json.loads(raw)
    d = Dispatcher(Registry.builtin(), ToolContext(Workspace(tmp_path)))
    for tool, extra in (("write_file", {}), ("create_file", {"path": "new.txt"}),
                        ("edit_file", {"old": "a", "new": args["content"]})):
        call_args = {**args, **extra} if tool != "edit_file" else {"path": "a.txt", **extra}
        envelope = d.execute(d.prepare(ToolCall("c", tool, call_args, raw)))
        assert not envelope.ok and "lone surrogate" in envelope.errors[0], envelope
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"] and (tmp_path / "a.txt").read_text() == "a\n"


_ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1252", "shift_jis")


@pytest.mark.slow
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.binary(max_size=200), suffix=st.binary(max_size=200),
       text=st.text(st.characters(blacklist_categories=["Cs"]), max_size=40), encoding=st.sampled_from(_ENCODINGS),
       crlf=st.booleans())
def test_property_any_file_round_trips_an_edit_or_is_refused(tmp_path: Path, prefix: bytes, suffix: bytes,
                                                             text: str, encoding: str, crlf: bool) -> None:
    """Arbitrary bytes around a marker: an edit and its reverse give back the exact bytes, or are refused."""
    nl = "\r\n" if crlf else "\n"
    try:
        body = (text + nl + "MARKER-7q" + nl + text).encode(encoding)
    except UnicodeEncodeError:
        body = ("MARKER-7q" + nl).encode("utf-8")
    data = prefix + nl.encode() + body + nl.encode() + suffix
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    read = call(tmp_path, "read_file", path="f.bin")
    if read.ok and not read.data.get("binary"):
        assert "\ufffd" not in read.data["content"] or "\ufffd" in data.decode("utf-8", "ignore")
    there = call(tmp_path, "edit_file", path="f.bin", old="MARKER-7q", new="CHANGED-7q")
    if not there.ok:
        assert path.read_bytes() == data
        return
    assert b"MARKER-7q" not in path.read_bytes() or data.count(b"MARKER-7q") > 1
    back = call(tmp_path, "edit_file", path="f.bin", old="CHANGED-7q", new="MARKER-7q")
    assert back.ok, back
    assert path.read_bytes() == data
