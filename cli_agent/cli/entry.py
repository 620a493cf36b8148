"""The process's entry point (`cli-agent`, `python -m cli_agent`): `--version` is answered at once, and everything
else goes to `cli.main`, which loads the packages a command needs."""

from __future__ import annotations

import gc
import sys

from cli_agent import __version__

# The collector's youngest generation runs every 700 new objects by default. Start-up keeps about 45,000 (modules,
# classes, functions) and frees few, so the default scans them over and over to find almost nothing (a one-shot run
# spent about 2 % of its instructions there); mypy sets its thresholds high for the same reason. A session's garbage
# is still collected, less often.
GC_THRESHOLDS = (50_000, 20, 20)


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"cli-agent {__version__}\n")
        return
    gc.set_threshold(*GC_THRESHOLDS)
    from cli_agent.cli.main import main as run  # deferred: `--version` answers before any package loads

    run()
