"""The command line: the entry point (`main`: a plain `-p` run parsed without Typer, errors to exit codes in one
place), the Typer app and its commands (`app`), what both paths share (`state`) and the replay command (`replay`).

The top floor: may import every package; nothing imports it.
"""
