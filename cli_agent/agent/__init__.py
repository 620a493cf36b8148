"""The agent loop and what it stands on: `loop` (a generator of typed events; it never prints), approval as data
(`approval`), the wire protocols (`wire`: native tool calls or strict JSON), starting the conversation again
(`compaction`), the project's tests as the judge of "done" (`verify`) and several candidates (`attempts`).

May import: prompt, tools and everything below them.
"""
