"""A file's text format (encoding, BOM, line endings, final newline), decoding, and faithful re-encoding.

Detection, in order:

1. a BOM: UTF-8, UTF-32 LE/BE, UTF-16 LE/BE (the BOM is kept apart and written back as it was);
2. a NUL byte without a BOM, or more than 10% control bytes in the first 8 KiB: binary (never decoded);
3. strict UTF-8;
4. not UTF-8: ISO-8859-1 (`latin-1`) if no byte is in 0x80-0x9F; else `cp1252` if it decodes strictly as cp1252
   and does not look like Shift-JIS; else `shift_jis` if it decodes as that, else `latin-1`. Both 8-bit codecs map
   bytes one to one, so whatever the model copies from the text comes back as the same bytes.
   Shift-JIS (or anything undecided, shown as latin-1) can be read but not edited: `editable` is False, and
   `encode` refuses with a message rather than corrupting it. UTF-16 without a BOM has NULs: binary.

Every format is checked to round-trip (`encode(decode(data)) == data`) before it is called editable, decoding is
always strict (no U+FFFD is ever produced), and encoding model text is strict: a lone surrogate or a character the
file's encoding lacks is a `ToolError` naming its position, raised before any byte is written.

Line endings are kept in the text as they are (`\\r\\n` stays `\\r\\n`); `newline` is the dominant one and `mixed`
says whether both occur. A lone `\\r` is not a line ending here.
"""

from __future__ import annotations

import codecs
from dataclasses import replace

from cli_agent.contracts import ToolError, dataclass

__all__ = ["TextFormat"]

_BOMS = (  # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le", "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "utf-32"),
    (codecs.BOM_UTF8, "utf-8", "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16"),
)
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\b\v\x1b")


@dataclass(frozen=True)
class TextFormat:
    encoding: str = "utf-8"  # the codec of the text after the BOM, e.g. "utf-8", "utf-16-le", "latin-1"
    bom: bytes = b""
    newline: str = "\n"  # the dominant line ending: "\n" or "\r\n"
    mixed: bool = False  # both "\n" and "\r\n" occur
    final_newline: bool = True
    editable: bool = True

    @property
    def display_encoding(self) -> str:
        """A codec that decodes the whole file, BOM included (what `Change.encoding` wants)."""
        return next((shown for bom, codec, shown in _BOMS if bom == self.bom and codec == self.encoding),
                    self.encoding)

    def describe(self) -> str:
        ending = "mixed LF/CRLF" if self.mixed else ("CRLF" if self.newline == "\r\n" else "LF")
        bom = " with BOM" if self.bom else ""
        return f"{self.encoding}{bom}, {ending} line endings"


def detect(data: bytes) -> TextFormat | None:
    """The text format of `data`, or None when it is binary."""
    fmt = _candidate(data)
    if fmt is not None and fmt.editable and not _always_round_trips(fmt) and not round_trips(data, fmt):
        fmt = replace(fmt, editable=False)
    return fmt


def _always_round_trips(fmt: TextFormat) -> bool:
    """Strict UTF-8 and Latin-1 decoding always encode back to the same bytes: no need to try."""
    return not fmt.bom and fmt.encoding in ("utf-8", "latin-1")


def _candidate(data: bytes) -> TextFormat | None:
    for bom, codec, _ in _BOMS:
        if data.startswith(bom):
            try:
                return _format(data[len(bom):].decode(codec), codec, bom)
            except UnicodeDecodeError:
                return None
    if b"\0" in data:
        return None
    head = data[:8192]
    if sum(1 for b in head if b < 0x20 and b not in _TEXT_CONTROLS) * 10 > len(head):
        return None
    try:
        data.decode("utf-8")  # validates; the line endings are counted on the bytes
    except UnicodeDecodeError:
        codec, editable = _legacy_codec(data)
        return _format(data.decode(codec), codec, b"", editable=editable)
    return _format(data, "utf-8", b"")


def _legacy_codec(data: bytes) -> tuple[str, bool]:
    """(codec, editable) for bytes that are not UTF-8."""
    if not any(0x80 <= b <= 0x9F for b in data):
        return "latin-1", True
    sjis = _strict(data, "shift_jis")
    if sjis is not None and _looks_japanese(sjis):
        return "shift_jis", False
    if _strict(data, "cp1252") is not None:
        return "cp1252", True
    return ("shift_jis", False) if sjis is not None else ("latin-1", False)


def _strict(data: bytes, codec: str) -> str | None:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        return None
    return text if text.encode(codec) == data else None


def _looks_japanese(text: str) -> bool:
    wide = [c for c in text if ord(c) > 0x7F]
    kana = sum(1 for c in wide if "\u3000" <= c <= "\u30ff" or "\uff61" <= c <= "\uff9f")
    return bool(wide) and kana * 10 >= len(wide) * 3


def _format(text: str | bytes, codec: str, bom: bytes, *, editable: bool = True) -> TextFormat:
    """The format of `text` (decoded, or the bytes of an encoding where line endings are single bytes)."""
    if isinstance(text, bytes):
        crlf, lf, final = text.count(b"\r\n"), text.count(b"\n"), text.endswith(b"\n")
    else:
        crlf, lf, final = text.count("\r\n"), text.count("\n"), text.endswith("\n")
    lf -= crlf
    return TextFormat(encoding=codec, bom=bom, newline="\r\n" if crlf > lf else "\n", mixed=bool(crlf and lf),
                      final_newline=final, editable=editable)


def decode(data: bytes, fmt: TextFormat) -> str:
    """The text of `data` (without its BOM); strict, so never a U+FFFD."""
    return data[len(fmt.bom):].decode(fmt.encoding)


def encode(text: str, fmt: TextFormat, *, what: str = "content") -> bytes:
    """`text` in the format `fmt` (BOM included); ToolError if the file can't be edited or a character can't be."""
    if not fmt.editable:
        raise ToolError(f"the file's encoding ({_shown(fmt)}) can't be edited faithfully; refused. Ask the user to "
                        f"convert it to UTF-8 first")
    try:
        return fmt.bom + text.encode(fmt.encoding)
    except UnicodeEncodeError as exc:
        char = exc.object[exc.start]
        line = exc.object.count("\n", 0, exc.start) + 1
        why = ("a lone surrogate" if 0xD800 <= ord(char) <= 0xDFFF
               else f"a character {fmt.encoding} can't represent")
        raise ToolError(f"{what} has {why} ({char!a}, U+{ord(char):04X}) at line {line}, character "
                        f"{exc.start}; nothing was written") from None


def _shown(fmt: TextFormat) -> str:
    return fmt.encoding if fmt.encoding != "latin-1" else "not UTF-8, undetermined, shown as latin-1"


def round_trips(data: bytes, fmt: TextFormat) -> bool:
    try:
        return encode(decode(data, fmt), fmt) == data
    except (ToolError, UnicodeError):
        return False


def to_lf(text: str) -> str:
    """`\\r\\n` as `\\n` (how text is shown to the model)."""
    return text.replace("\r\n", "\n")


def lines(data: bytes, fmt: TextFormat) -> list[str]:
    """The lines of `data` as the model sees them (`to_lf`), without their endings; no empty one after the last."""
    out = to_lf(decode(data, fmt)).split("\n")
    if fmt.final_newline or out == [""]:
        out.pop()
    return out


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"), (b"PK\x03\x04", "ZIP archive (or jar, docx, wheel...)"), (b"\x1f\x8b", "gzip data"),
    (b"\x7fELF", "ELF executable"), (b"SQLite format 3\0", "SQLite database"), (b"\0asm", "WebAssembly module"),
    (b"\xca\xfe\xba\xbe", "Java class or Mach-O fat binary"), (b"BZh", "bzip2 data"), (b"\xfd7zXZ\0", "xz data"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"), (b"\x28\xb5\x2f\xfd", "zstd data"), (b"MZ", "Windows executable"),
    (b"OggS", "Ogg media"), (b"ID3", "MP3 audio"), (b"\0\0\1\0", "Windows icon"),
)


def guess_type(data: bytes) -> str:
    """A short guess at what binary `data` is, from its first bytes."""
    if data[:4] == b"RIFF" and data[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return {b"WEBP": "WebP image", b"WAVE": "WAV audio", b"AVI ": "AVI video"}[data[8:12]]
    return next((name for magic, name in _MAGIC if data.startswith(magic)), "binary data")
