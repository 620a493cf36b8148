"""Paging a long renderable (the `v` answer at an approval): drawn with its colours, then handed to the user's
`$PAGER` (else `less`) with `-R` added to `LESS`, so the colours show instead of their escape codes."""

from __future__ import annotations

import io
import os
import subprocess
from typing import Any

from rich.console import Console


def page(console: Any, renderable: Any) -> None:
    """Show `renderable` in the pager at the console's width; printed instead when no pager can be started."""
    out = io.StringIO()
    Console(file=out, width=console.width, force_terminal=True, color_system=console.color_system or "standard",
            highlight=False).print(renderable)
    env = dict(os.environ)
    less = env.get("LESS", "")
    if "R" not in less:  # -R, or R among bundled flags (LESS=FRX): colours already pass through
        env["LESS"] = (less + " -R").strip()  # the user's own options kept
    command = env.get("PAGER", "").strip() or "less"
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env, errors="backslashreplace")
    except OSError:
        console.print(renderable)
        return
    try:
        with proc.stdin as pipe:  # type: ignore[union-attr]
            pipe.write(out.getvalue())
    except (OSError, KeyboardInterrupt):  # the pager quit before reading it all
        pass
    while True:
        try:
            proc.wait()
            return
        except KeyboardInterrupt:  # the pager has the terminal; it handles Ctrl-C itself
            pass
