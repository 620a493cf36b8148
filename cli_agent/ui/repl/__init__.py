"""The interactive REPL: `repl` (the loop of prompts), the command API its commands use (`context`), the prompt line
and toolbar (`line`, `toolbar`), keys, completion, pastes, the picker and `!COMMAND` (`bang`); `start/` is what
happens before and behind the first prompt (the terminal check, onboarding, the trust question, the session opening),
and `commands/` holds the slash commands.

May import: view/ and the packages below ui/.
"""
