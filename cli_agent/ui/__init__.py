"""The terminal front ends: `view/` (how events, changes and results are drawn, and the approval question: shared
by all), `repl/` (the interactive REPL: its prompt, keys, start-up, and `repl/commands/`, the slash commands) and
`headless/` (`-p`, `--output json|stream-json`, the listings).

A front end, beside serve/ and eval/: may import workflows, session and everything below them; never serve/,
eval/ or cli/. Inside, repl/ and headless/ stand on view/.
"""
