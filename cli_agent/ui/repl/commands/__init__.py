"""The REPL's slash commands: the registry (`commands`), the built-ins, and one module per group (context,
diff, facts, MCP, model, sessions, undo, workflows), registered in the order of `command_set`.

May import: the REPL's modules, view/ and the packages below ui/.
"""
