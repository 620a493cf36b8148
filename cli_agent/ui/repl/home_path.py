"""A path as the REPL shows it: the home folder said as `~` (the banner, the toolbar)."""

from __future__ import annotations

from pathlib import Path


def short_path(path: str) -> str:
    """`path` with the home folder said as `~`."""
    home = str(Path.home())
    return "~" + path[len(home):] if home != "/" and (path == home or path.startswith(home + "/")) else path
