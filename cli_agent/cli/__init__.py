"""The command line: the process's entry (`entry`: `--version` at once, anything else to `main`), the command
line's entry (`main`: a plain `-p` run parsed without Typer, errors to exit codes in one place), the Typer app
(`app`: the root command and the table that registers every command), the commands by group (`tool_commands`,
`config_commands`, `check_commands`, `session_commands`, `serve_commands`, with the options they share in `flags`),
what both paths share (`state`) and the replay command (`replay`).

The top floor: may import every package; nothing imports it.
"""

__all__: list[str] = []  # the top floor offers nothing: `cli_agent/__main__.py` runs `cli.entry.main`
