"""Text from the model, the workspace or the user, made safe to print on a terminal. Imports nothing heavy, so
every front end (and the REPL before its first prompt) can use it.

`escape_for_terminal` is for text; `json_for_output` for the JSON a command prints (`--output json`, `--json`):
JSON already escapes C0 controls, and this escapes what it leaves raw (DEL, C1 controls, bidi marks, lone
surrogates, which cannot even be encoded), so the object stays valid JSON and nothing in it acts on a terminal.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["clip", "escape_for_terminal", "json_for_output"]

_BIDI = "\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069"
_RAW_IN_JSON = re.compile(f"[\x7f-\x9f{_BIDI}\ud800-\udfff]")


def escape_for_terminal(text: str) -> str:
    """Control characters, escapes, CR, bidi marks and lone surrogates shown visibly instead of interpreted."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\n" or ch == "\t":
            out.append(ch)
        elif code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif (0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069 or code in (0x200E, 0x200F, 0x061C)
              or 0xD800 <= code <= 0xDFFF):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def clip(text: str, width: int = 60) -> str:
    """`text` on one line, cut to `width` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"
def json_for_output(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, default=str, **options)` with every character that could act on a
    terminal (or fail to encode) written as a `\\uXXXX` escape."""
    text = json.dumps(value, ensure_ascii=False, default=str, **options)
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
