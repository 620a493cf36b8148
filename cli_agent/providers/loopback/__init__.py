"""Model servers on 127.0.0.1 that speak the real wires, for tests and benchmarks: the OpenAI chat-completions
server (`fake_openai`) and the Anthropic Messages server over SSE (`fake_anthropic`). They serve scripted replies and
record each request body, as a provider would receive it.

May import: contracts (and the standard library); nothing of cli_agent imports them.
"""
