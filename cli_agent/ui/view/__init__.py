"""What the terminal front ends share: how things are drawn (the transcript's renderer, `render` and `transcript`; a
call's title and a change's diff, `change_view`; the command panel, the resume preview, the pager, the live region
while the model works, `working`, and the sandbox status line), and the approval question (`approve`).

May import: the packages below ui/; not repl/ or headless/.
"""
