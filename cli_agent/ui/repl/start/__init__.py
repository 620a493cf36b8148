"""The REPL's start-up pieces: onboarding and the trust question, what opens behind the first prompt (`Startup`: the
settings, the session, the warm-up), the model it starts with (`start_model`, with the providers' keys it offers),
the banner and the goodbye line, and the MCP servers' failures said above the prompt. `ui.repl.run` puts them
together before the REPL's loop. May import the small parts of `ui.repl` (answer, picker, keys, home_path) and below;
never the commands, the loop or its entry (the `repl` layers contract of `.importlinter`).
"""
