"""Text from the model, the workspace or the user, made safe to print on a terminal. Imports nothing, so every
front end (and the REPL before its first prompt) can use it."""

from __future__ import annotations

__all__ = ["clip", "escape_for_terminal"]


def escape_for_terminal(text: str) -> str:
    """Control characters, escapes, CR and bidi marks shown visibly instead of being interpreted."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\n" or ch == "\t":
            out.append(ch)
        elif code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069 or code in (0x200E, 0x200F, 0x061C):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def clip(text: str, width: int = 60) -> str:
    """`text` on one line, cut to `width` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"
