"""The interactive REPL: `repl` (the loop of prompts), its start-up behind the first prompt, keys, completion and
toolbar, pastes, `!COMMAND`, onboarding and the trust question; `commands/` holds the
slash commands.

May import: view/ and the packages below ui/.
"""
