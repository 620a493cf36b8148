import json, sys, httpx  # noqa: E401, I001 (the floor: `cli-agent -p hi`'s streamed request in 5 lines of httpx)
body = {"model": "x", "messages": [{"role": "user", "content": "hi"}], "stream": True}
with httpx.Client() as client, client.stream("POST", sys.argv[1] + "/chat/completions", json=body) as response:
    events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: {")]
print("".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"]))
