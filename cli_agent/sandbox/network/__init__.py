"""The command sandbox's network by rule: which addresses may be reached (`address`, also web_fetch's check), which
hosts the user's rules allow (`rules`, with the presets), the proxy cli-agent runs outside the sandbox (`proxy`), the
relay inside it that hands a command's connections to the proxy (`relay`), and the session's network that puts them
together for each command (`session_net`).

May import: config, fs, validated, contracts (as the rest of `sandbox`).
"""
