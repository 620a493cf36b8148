"""A session: the settings turned into a workspace, a registry, a provider, an agent and a trace (`session`),
driving a run's events to their sinks, resuming a stored session; and what every front end starts one from
(`launch`: the root's flags, the settings they load, the provider factory).

May import: mcp, history, agent and everything below them.
"""
