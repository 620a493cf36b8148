"""The REPL's start-up: `run_repl` (the terminal check, onboarding, the trust question), what opens behind the first
prompt (`Startup`: the settings, the session, the warm-up), the model it starts with, the banner and the goodbye
line, and the MCP servers' failures said above the prompt. It may import `ui.repl` and below."""
