"""The process's entry point (`cli-agent`, `python -m cli_agent`): `--version` is answered at once, and everything
else goes to `cli.main`, which loads the packages a command needs."""

from __future__ import annotations

import sys

from cli_agent import __version__


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"cli-agent {__version__}\n")
        return
    from cli_agent.cli.main import main as run  # deferred: `--version` answers before any package loads

    run()
