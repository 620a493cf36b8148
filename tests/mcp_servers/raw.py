"""A hand-written MCP server that misbehaves on purpose: `python raw.py MODE`.

    garbage     answers the first message with lines that are not JSON-RPC, and exits
    noisy       garbage before every answer, otherwise a working server with an `echo` tool
    badresult   answers tools/call with a result that breaks the schema (content is not a list)
    hang        answers until the first tools/call, then nothing, not even a ping
    badschema   lists a tool whose input schema is not an object, next to a good one
    badnames    lists tools named with an escape sequence, a newline, a path, 300 characters..., next to `echo`
    chatty      writes 40 MB to stderr before it answers, otherwise a working server
    slowstart   sleeps a minute before it reads anything
    redos       `echo`'s schema has a backtracking pattern, `^(a+)+$`; `alt`'s another one, `^(a|a)*$`
"""

import json
import sys

BAD_NAMES = ["\x1b[31mred\x1b[0m", "new\nline", "ends_with_newline\n", "../../etc/passwd", "x" * 300, "has space",
             "dotted.name", ""]

MODE = sys.argv[1]
GOOD = {"name": "echo", "description": "Echo a text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
BAD = {"name": "broken", "description": "A tool with an unusable schema.",
       "inputSchema": {"type": "object", "properties": {"x": {"type": "banana"}}}}


def send(message):
    if MODE == "noisy":
        sys.stdout.write("noise: not json-rpc\n")
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request):
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"}}
    if method == "tools/list":
        if MODE == "badnames":
            return {"tools": [GOOD, *({"name": n, "inputSchema": {"type": "object"}} for n in BAD_NAMES)]}
        if MODE == "redos":
            def schema(pattern):
                return {"type": "object", "properties": {"text": {"type": "string", "pattern": pattern}}}
            return {"tools": [{**GOOD, "inputSchema": schema("^(a+)+$")},
                              {**GOOD, "name": "alt", "inputSchema": schema("^(a|a)*$")}]}
        return {"tools": [GOOD, BAD] if MODE == "badschema" else [GOOD]}
    if method == "tools/call":
        if MODE == "badresult":
            return {"content": "not a list"}
        return {"content": [{"type": "text", "text": params["arguments"]["text"]}]}
    return {}


def main():
    hung = False
    if MODE == "slowstart":
        import time
        time.sleep(60)
    if MODE == "chatty":
        line = "chatter " * 127 + "\n"
        for _ in range(40 * 1024):
            sys.stderr.write(line)
        sys.stderr.flush()
    for line in sys.stdin:
        if MODE == "garbage":
            sys.stdout.write("hello, I am not an MCP server\n{broken json\n")
            sys.stdout.flush()
            return
        request = json.loads(line)
        if "id" not in request or hung:
            continue
        if MODE == "hang" and request.get("method") == "tools/call":
            hung = True
            continue
        send({"jsonrpc": "2.0", "id": request["id"], "result": answer(request)})


main()
