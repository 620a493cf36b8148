from __future__ import annotations

from cli_agent.cli.entry import main

main()
