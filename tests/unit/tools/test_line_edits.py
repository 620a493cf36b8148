"""The edit forms that need no copied text: `replace_lines` (numbers from a file shown as it is now) and
`replace_definition` (a Python function or class by name), through the real dispatcher, with a conversation's
`SeenFiles` as in a session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cli_agent.contracts.messages import ToolCall
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.context import SeenFiles
from cli_agent.tools.dispatch import Dispatcher, Prepared
from cli_agent.tools.registry import Registry

APP = "import os\n\n\ndef add(a, b):\n    return a - b\n\n\nclass Cart:\n    @property\n    def total(self):\n" \
      "        return 0\n\n    def empty(self):\n        return True\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "notes.txt").write_bytes(b"one\r\ntwo\r\nthree")
    return tmp_path


def dispatcher(root: Path) -> Dispatcher:
    return Dispatcher(Registry.builtin(), ToolContext(Workspace(root), seen=SeenFiles()))


def call(d: Dispatcher, tool: str, **arguments: Any) -> Prepared:
    return d.prepare(ToolCall(id="c", name=tool, arguments=arguments))


def apply(d: Dispatcher, prepared: Prepared) -> None:
    assert prepared.error is None, prepared.error
    assert d.execute(prepared).ok


def test_replace_lines_needs_the_file_shown_as_it_is_now(ws: Path) -> None:
    d = dispatcher(ws)
    refused = call(d, "replace_lines", path="app.py", start_line=5, end_line=5, new="    return a + b\n")
    assert refused.error is not None and "changed since it was shown" in refused.error.errors[0]
    assert "5|     return a - b" in refused.error.data["region"]  # the lines as they are, numbered
    apply(d, call(d, "replace_lines", path="app.py", start_line=5, end_line=5, new="    return a + b"))
    assert (ws / "app.py").read_text() == APP.replace("a - b", "a + b")
    again = call(d, "replace_lines", path="app.py", start_line=1, end_line=1, new="import sys\n")
    assert again.error is not None  # its own change moved the file on: shown again first
    (ws / "app.py").write_text("# the user added a line\n" + (ws / "app.py").read_text())
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "app.py"}))
    apply(d, call(d, "replace_lines", path="app.py", start_line=2, end_line=4, new=""))  # delete lines
    assert (ws / "app.py").read_text().startswith("# the user added a line\ndef add")


def test_replace_lines_keeps_line_endings_and_a_missing_final_newline(ws: Path) -> None:
    d = dispatcher(ws)
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "notes.txt"}))
    apply(d, call(d, "replace_lines", path="notes.txt", start_line=3, end_line=3, new="THREE\n"))
    assert (ws / "notes.txt").read_bytes() == b"one\r\ntwo\r\nTHREE"


@pytest.mark.parametrize(("start", "end"), [(0, 1), (3, 2), (1, 99)])
def test_a_range_that_is_not_in_the_file_is_refused(ws: Path, start: int, end: int) -> None:
    d = dispatcher(ws)
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "app.py"}))
    prepared = call(d, "replace_lines", path="app.py", start_line=start, end_line=end, new="x\n")
    assert prepared.error is not None and prepared.change is None


def test_replace_definition_takes_a_method_by_name_reindented_with_its_decorators(ws: Path) -> None:
    d = dispatcher(ws)
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "app.py"}))
    new = "@property\ndef total(self):\n    return sum(self.items)\n"
    apply(d, call(d, "replace_definition", path="app.py", name="Cart.total", new=new))
    text = (ws / "app.py").read_text()
    assert "    @property\n    def total(self):\n        return sum(self.items)\n\n    def empty" in text
    apply(d, call(d, "replace_definition", path="app.py", name="add", new="def add(a, b):\n    return a + b"))
    assert "def add(a, b):\n    return a + b\n\n\nclass Cart" in (ws / "app.py").read_text()


def test_replace_definition_refuses_what_it_cannot_place_or_what_would_not_parse(ws: Path) -> None:
    d = dispatcher(ws)
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "app.py"}))
    unknown = call(d, "replace_definition", path="app.py", name="Cart.missing", new="def missing(self): pass")
    assert unknown.error is not None and "Cart.total" in unknown.error.data["definitions"]
    broken = call(d, "replace_definition", path="app.py", name="add", new="def add(a, b:\n    return a + b\n")
    assert broken.error is not None and broken.change is None
    other = call(d, "replace_definition", path="notes.txt", name="x", new="def x(): pass")
    assert other.error is not None and "Python files" in other.error.errors[0]
    (ws / "twice.py").write_text("def f():\n    pass\n\n\ndef f():\n    pass\n")
    d.run(ToolCall(id="r2", name="read_file", arguments={"path": "twice.py"}))
    twice = call(d, "replace_definition", path="twice.py", name="f", new="def f():\n    return 1\n")
    assert twice.error is not None and "2 times" in twice.error.errors[0]
    assert (ws / "app.py").read_text() == APP


def test_replace_lines_drops_copied_line_numbers_and_moves_new_to_the_indentation_that_parses(ws: Path) -> None:
    d = dispatcher(ws)
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "app.py"}))
    apply(d, call(d, "replace_lines", path="app.py", start_line=4, end_line=5,
                  new="def add(a, b):\n5|     return a + b"))
    assert (ws / "app.py").read_text() == APP.replace("a - b", "a + b")
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "app.py"}))
    apply(d, call(d, "replace_lines", path="app.py", start_line=10, end_line=11,
                  new="def total(self):\n    return 1"))  # written at column 0 inside the class
    assert "    @property\n    def total(self):\n        return 1\n\n    def empty" in (ws / "app.py").read_text()


def test_text_that_only_looks_numbered_or_indented_is_left_as_written(ws: Path) -> None:
    (ws / "table.txt").write_text("1| one\n2| two\n")
    d = dispatcher(ws)
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "table.txt"}))
    apply(d, call(d, "replace_lines", path="table.txt", start_line=2, end_line=2, new="2| TWO\n3| three"))
    assert (ws / "table.txt").read_text() == "1| one\n2| TWO\n3| three\n"
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "app.py"}))
    refused = call(d, "replace_lines", path="app.py", start_line=5, end_line=5, new="  return (a +\n")
    assert refused.error is not None and "unable to run" in refused.error.errors[0]  # no indentation mends this


def test_a_string_cut_short_at_a_double_quote_is_explained(ws: Path) -> None:
    d = dispatcher(ws)
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "app.py"}))
    refused = call(d, "replace_lines", path="app.py", start_line=5, end_line=5, new="    return a.replace('")
    assert refused.error is not None and "unterminated string" in refused.error.errors[0]
    assert 'not written as \\"' in refused.error.errors[0]
    wrong = call(d, "replace_lines", path="app.py", start_line=5, end_line=5, new="    return (a +")
    assert wrong.error is not None and "JSON string" not in wrong.error.errors[0]  # said only where it fits


ORDINAL = 'def ordinalize(number):\n    """Doc with "quotes"."""\n    return "{}{}".format(number, ordinal(number))\n'


def shown(root: Path, name: str, text: str) -> Dispatcher:
    """A dispatcher of a conversation that has read `name`, a file holding `text`."""
    (root / name).write_text(text)
    d = dispatcher(root)
    d.run(ToolCall(id="r", name="read_file", arguments={"path": name}))
    return d


def test_edit_file_finds_old_written_with_the_other_quotes_and_mends_half_quoted_strings(tmp_path: Path) -> None:
    d = shown(tmp_path, "inflect.py", ORDINAL)
    # old as a model writes it inside JSON: ' for ", and new with one end of a string each way
    done = call(d, "edit_file", path="inflect.py", old="return '{}{}'.format(number, ordinal(number))",
                new="return '{}{}\".format(number, ordinal(number).upper())")
    assert done.error is None and done.change is not None
    assert "quotes ignored" in done.change.summary and 'quotes written as "' in done.change.summary
    apply(d, done)
    assert (tmp_path / "inflect.py").read_text() == ORDINAL.replace("ordinal(number))", "ordinal(number).upper())")


def test_quotes_are_read_alike_only_where_that_finds_one_place(tmp_path: Path) -> None:
    d = shown(tmp_path, "two.py", "a = \"x\"\nb = 'x'\n")
    refused = call(d, "edit_file", path="two.py", old="= 'x'\n", new="= 'y'\n")
    assert refused.error is None  # exact: only b's line
    ambiguous = call(d, "edit_file", path="two.py", old="= `x`", new="= 'y'")
    assert ambiguous.error is not None
    both = call(d, "edit_file", path="two.py", old="'x'\nb", new="'z'\nb")
    assert both.error is None  # "x"\nb is the one place with quotes read alike


def test_missing_colons_are_added_only_where_that_makes_the_file_parse(tmp_path: Path) -> None:
    d = shown(tmp_path, "m.py", "class M:\n    def strip(self):\n        return ''\n")
    body = "    def is_empty(self)\n        if self.strip() == ''\n            return True\n        else\n" \
           "            return False\n"
    done = call(d, "replace_lines", path="m.py", start_line=3, end_line=3, new="        return ''\n\n" + body)
    assert done.error is None and done.change is not None and "missing colons added" in done.change.summary
    apply(d, done)
    text = (tmp_path / "m.py").read_text()
    assert "    def is_empty(self):\n        if self.strip() == '':\n" in text and "        else:\n" in text
    # a line that is broken otherwise is refused as before, nothing mended
    d.run(ToolCall(id="r2", name="read_file", arguments={"path": "m.py"}))
    broken = call(d, "replace_lines", path="m.py", start_line=3, end_line=3, new="        return (\n")
    assert broken.error is not None and "unable to run" in broken.error.errors[0]


def test_replace_definition_mends_quotes(tmp_path: Path) -> None:
    d = shown(tmp_path, "inflect.py", ORDINAL)
    done = call(d, "replace_definition", path="inflect.py", name="ordinalize",
                new="def ordinalize(number):\n    return '{}{}\".format(number, 'th')\n")
    assert done.error is None and done.change is not None and 'quotes written as "' in done.change.summary
    apply(d, done)
    assert 'return "{}{}".format(number, "th")' in (tmp_path / "inflect.py").read_text()
