from __future__ import annotations

from cli_agent.cli.main import main

main()
