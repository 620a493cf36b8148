"""Project facts and locks: the fact store (`store`: `.cli-agent/facts.toml` and its draft) and its TOML files (`file`).

May import: config, fs, validated, contracts.
"""
