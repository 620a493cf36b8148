"""The front ends with no prompt: the one-shot run (`oneshot`: `-p`, `workflow run`, `tools run`), the printers of
`--output text|json|stream-json` (`printers`) and the listings (`tools`, `prompt`, `workflows`).

May import: view/ and the packages below ui/.
"""
