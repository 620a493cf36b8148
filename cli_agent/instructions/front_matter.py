"""The YAML front matter of a `SKILL.md`, read without a YAML library and without executing anything.

    fields, body = split_front_matter(text)     # ({"name": "pdf", "description": "..."}, "# PDF\n...")

The subset the format uses: `key: value` lines, a value plain or quoted ('...' or "..."), a block scalar (`key: |`
or `key: >`, its indented lines after it), and a mapping (`metadata:` followed by indented `key: value` lines,
kept as a dict of strings). A list (`- item`) under a key becomes a tuple of strings. Anything else (anchors, tags,
flow mappings) is kept as the plain text it is: nothing in the text is ever evaluated. A file that does not start
with a `---` line, or whose front matter never ends, raises `ValueError` with what is wrong.
"""

from __future__ import annotations

import re

MAX_LINES = 200  # lines of front matter read; more is refused as malformed

_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")
Value = str | dict[str, str] | tuple[str, ...]


def split_front_matter(text: str) -> tuple[dict[str, Value], str]:
    """(the front matter's fields, the body after it); ValueError saying what is malformed."""
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise ValueError("it does not start with a '---' line of YAML front matter")
    end = next((i for i, line in enumerate(lines[1:MAX_LINES + 2], 1) if line.rstrip() == "---"), None)
    if end is None:
        raise ValueError("its front matter has no closing '---' line")
    return parse_fields(lines[1:end]), "\n".join(lines[end + 1:]).strip("\n")


def parse_fields(lines: list[str]) -> dict[str, Value]:
    fields: dict[str, Value] = {}
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY.match(line)
        if match is None or line[0].isspace():
            raise ValueError(f"front matter line {i + 1}: expected 'key: value', got {line.strip()[:60]!r}")
        key, raw = match.group(1), (match.group(2) or "").strip()
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][0].isspace()):
            block.append(lines[i])
            i += 1
        fields[key] = _value(raw, block)
    return fields


def _value(raw: str, block: list[str]) -> Value:
    indented = [line.strip() for line in block if line.strip()]
    if raw in ("|", "|-", "|+", ">", ">-", ">+"):
        return ("\n" if raw.startswith("|") else " ").join(indented)
    if raw and raw[0] not in "'\"" and indented:  # a plain scalar continued on the next lines
        return " ".join([raw, *indented])
    if raw:
        return _scalar(raw)
    if indented and all(line.startswith("- ") or line == "-" for line in indented):
        return tuple(_scalar(line[1:].strip()) for line in indented)
    mapping: dict[str, str] = {}
    for line in indented:
        key, colon, value = line.partition(":")
        if colon:
            mapping[key.strip()] = _scalar(value.strip())
    return mapping if mapping else ""


def _scalar(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        body = raw[1:-1]
        return re.sub(r'\\(["\\nt])', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)
    return re.sub(r"\s+#.*$", "", raw)  # a trailing comment
