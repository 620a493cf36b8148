"""How things are drawn: the transcript's renderer (`render`, `transcript`), a call's title and a change's diff
(`change_view`), the command panel, the resume preview, the pager and the sandbox status line.

May import: the packages below ui/; not repl/ or headless/.
"""
