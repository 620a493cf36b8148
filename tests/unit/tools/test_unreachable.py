"""Code a change leaves unreachable in the Python functions it touched is named (a warning, never a refusal); code
that was dead before, or lies in a function the change did not touch, is not."""

from __future__ import annotations

from cli_agent.contracts.change import Change
from cli_agent.tools.handlers.syntax_guard import unreachable_by

BEFORE = ("def mean(values):\n    total = sum(values)\n    return total / (len(values) + 1)\n\n\n"
          "def legacy():\n    return 1\n    print('dead already')\n")


def change(after: str, before: str | None = BEFORE, path: str = "calc.py") -> Change:
    return Change("edit_file", "edit" if before is not None else "create", path,
                  before.encode() if before is not None else None, after.encode())


def test_a_return_put_above_the_buggy_line_is_named_with_its_lines() -> None:
    after = BEFORE.replace("    return total / (len", "    return total / len(values)\n    return total / (len")
    note = unreachable_by(change(after))
    assert note is not None and note.startswith("calc.py: line 4 of mean() can never run (after the `return` on "
                                                "line 3)")
    assert "legacy" not in note  # dead before the change, and not touched by it


def test_nested_blocks_methods_and_new_files_are_judged_and_clean_code_is_not() -> None:
    method = ("class Box:\n    def get(self, items):\n        for item in items:\n            if item:\n"
              "                continue\n                print(item)\n                print(item)\n"
              "        return None\n")
    note = unreachable_by(change(method, None, "box.py"))
    assert note is not None and "lines 6-7 of Box.get() can never run (after the `continue` on line 5)" in note
    assert unreachable_by(change(BEFORE.replace("+ 1", "+ 0"))) is None  # a plain edit
    assert unreachable_by(change(BEFORE + "\n\ndef more():\n    return 2\n")) is None  # legacy untouched
    assert unreachable_by(change("x = 1\n", path="notes.txt")) is None
    assert unreachable_by(change("def broken(:\n")) is None  # not parsed: the syntax guard speaks for it
