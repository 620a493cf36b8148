from __future__ import annotations

from cli_agent.cli import main

main()
