"""The web_fetch tool: one page fetched over http or https and turned into text for the model.

`address` decides which addresses may be reached and opens the connection to a checked one (never a loopback,
private or link-local address unless the user's own config allows them), `fetch` follows a bounded number of
redirects under a size and a time cap, and `page` turns what came back into Markdown or text.

May import: config, fs, validated, contracts (as the rest of `tools`).
"""
