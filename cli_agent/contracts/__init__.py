"""The shapes every layer shares: the error tree and its exit codes (`errors`), the conversation (`messages`), a
tool call's result (`envelope`), the typed events of a run (`events`), a planned file change and its diff (`change`,
`hunks`), lines as the model is shown them (`line_numbers`), and what text may reach a terminal or a JSON line
(`escape`).

The ground floor: imports nothing of cli_agent.
"""
