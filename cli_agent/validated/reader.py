"""Reading the TOML files cli-agent checks (config, tool specs, facts, workflows): where a parse error is, in words."""

from __future__ import annotations

import re

__all__ = ["toml_position"]


def toml_position(message: str) -> str:
    """`line 3, column 7: Expected '=' ...` from tomllib's `Expected '=' ... (at line 3, column 7)`."""
    match = re.search(r"\s*\(at (line \d+, column \d+|end of document)\)$", message)
    return f"{match.group(1)}: {message[: match.start()]}" if match else message
