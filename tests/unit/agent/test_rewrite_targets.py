"""Where a whole-definition candidate rewrites: the ranked definitions in turn, the named function first, then the
package's functions it calls (in another file too), never the same wrong place for ever."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from clikit import cli, user_config

from cli_agent.agent.judge.rewrite_targets import PER_TARGET, Targets, callees, fixed_names
from cli_agent.fs import Workspace
from cli_agent.prompt import Place, task_brief

CORE = '''import math

from pkg.helpers import positive
from . import util
from pkg import again


def total(items):
    """The sum of the positive items."""
    kept = positive(items)
    return util.clip(sum(kept), math.inf) + again(0) + _local(0) + len(kept) - len(kept)


def _local(x):
    return x
'''
HELPERS = "def positive(items):\n    return [x for x in items if x > 1]\n"
UTIL = "def clip(value, top):\n    return min(value, top)\n"
INIT = "from pkg.core import total\nfrom pkg.more import again\n"
MORE = "def again(x):\n    return x\n"
TEST = "from pkg import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n"


def _package(root: Path) -> Workspace:
    for rel, text in {"pkg/__init__.py": INIT, "pkg/core.py": CORE, "pkg/helpers.py": HELPERS, "pkg/util.py": UTIL,
                      "pkg/more.py": MORE, "tests/test_total.py": TEST, "conftest.py": ""}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Workspace(root)


def test_the_callees_of_a_function_are_found_in_its_file_and_in_the_package_s_modules(tmp_path: Path) -> None:
    workspace = _package(tmp_path)
    brief = task_brief("pkg.total([1, 2, 3]) returns 5, it should be 6", workspace)
    assert brief is not None and [(p.path, p.name) for p in brief.places][:1] == [("pkg/core.py", "total")]
    found = [(caller, p.path, p.name, p.first, p.last) for caller, p in callees(brief.places[:1], workspace)]
    assert found == [("total", "pkg/helpers.py", "positive", 1, 2), ("total", "pkg/util.py", "clip", 1, 2),
                     ("total", "pkg/more.py", "again", 1, 2),  # through the package's __init__.py
                     ("total", "pkg/core.py", "_local", 14, 15)]  # sum, len and math.inf are not the package's


def test_after_failed_rewrites_of_one_place_the_next_ranked_definition_is_the_target(tmp_path: Path) -> None:
    workspace = _package(tmp_path)
    brief = task_brief("pkg.total([1, 2, 3]) returns 5, it should be 6", workspace)
    assert brief is not None
    targets = Targets(brief.places, workspace)
    first = targets.places
    assert targets.note() == ""
    assert not any(targets.failed() for _ in range(PER_TARGET - 1)) and targets.places == first
    assert targets.failed() and [p.name for p in targets.places] == ["positive"]
    assert "`positive`, which `total` calls, may hold the bug" in targets.note()
    names = []
    for _ in range(6):
        for _ in range(PER_TARGET):
            moved = targets.failed()
        assert moved
        names.append(",".join(p.name for p in targets.places))
    assert [p.name for p in first] == ["total"]
    assert names == ["clip", "again", "_local", "total", "positive", "clip"], names  # then round again from the first


def test_the_definition_the_task_says_to_fix_is_the_first_target_alone_then_all_the_brief_found(tmp_path: Path
                                                                                                 ) -> None:
    (tmp_path / "dates.py").write_text("def _sign(text):\n    return 1\n\n\ndef offset(text):\n"
                                       "    return _sign(text) * int(text[1:])\n")
    workspace = Workspace(tmp_path)
    task = "offset('-3') returns 3, it should be -3. Fix offset in dates.py."
    brief = task_brief(task, workspace)
    assert brief is not None and sorted(p.name for p in brief.places) == ["_sign", "offset"]
    assert fixed_names(task) == {"offset"} and fixed_names("Fix `Version.match`, then fix the bug") == {"match", "the"}
    targets = Targets(brief.places, workspace, fixed=fixed_names(task))
    assert [p.name for p in targets.places] == ["offset"] and targets.note() == ""  # not its helper beside it
    assert [p.name for p in targets.placed] == ["offset"]  # a `_sign` of the model's own is not placed unseen
    assert not any(targets.failed() for _ in range(PER_TARGET - 1))
    assert targets.failed() and targets.places == tuple(brief.places)  # then what the brief found, as before
    assert sorted(p.name for p in targets.placed) == ["_sign", "offset", "offset"]
    for fixed in (fixed_names("Fix the bug in dates.py."), {"offset", "_sign"}):  # names no place, or all of them
        assert Targets(brief.places, workspace, fixed=fixed).places == tuple(brief.places)
    assert Targets(brief.places, workspace, search=False, fixed={"offset"}).places == tuple(brief.places)


def test_a_task_that_adds_or_renames_a_name_keeps_its_places(tmp_path: Path) -> None:
    workspace = _package(tmp_path)
    brief = task_brief("pkg.total([1, 2, 3]) returns 5, it should be 6", workspace)
    assert brief is not None
    targets = Targets(brief.places, workspace, search=False)
    assert not any(targets.failed() for _ in range(3 * PER_TARGET)) and targets.places == tuple(brief.places)


def test_a_function_that_calls_nothing_of_the_package_stays_the_target(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return abs(a) - b\n")
    workspace = Workspace(tmp_path)
    brief = task_brief("add(2, 3) in calc.py returns -1, it should be 5", workspace)
    assert brief is not None
    targets = Targets(brief.places, workspace)
    assert not any(targets.failed() for _ in range(3 * PER_TARGET)) and targets.places == tuple(brief.places)


WRONG_TOTAL = ["```python\ndef total(items):\n    kept = positive(items)\n    return sum(kept) + 0\n```",
               "```python\ndef total(items):\n    return sum(positive(list(items)))\n```",
               "```python\ndef total(items):\n    return sum(x for x in positive(items))\n```"]
# the caller brought back too, as a small model does: it goes to its own place, not beside the helper
RIGHT_HELPER = ("The filter drops 1:\n```python\ndef positive(items):\n    return [x for x in items if x > 0]\n\n\n"
                "def total(items):\n    return sum(positive(items))\n```")


@pytest.mark.slow
def test_when_rewrites_of_the_named_function_fail_the_helper_it_calls_is_rewritten_and_verified(
        tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    _package(ws)
    (ws / "pkg" / "core.py").write_text("from pkg.helpers import positive\n\n\ndef total(items):\n"
                                        "    return sum(positive(items))\n")
    (ws / "pkg" / "__init__.py").write_text("from pkg.core import total\n")
    user_config(home, f'test_command = "{sys.executable} -m pytest -q -p no:cacheprovider"\nverify_rounds = 0\n')
    script, record = tmp_path / "script.json", tmp_path / "requests.jsonl"
    wrong_edit = {"tool_calls": [{"name": "edit_file", "arguments": {
        "path": "pkg/core.py", "old": "sum(positive(items))", "new": "sum(positive(items)) + 2"}}]}
    replies = [wrong_edit, {"text": "Done."}, *({"text": t} for t in WRONG_TOTAL), {"text": RIGHT_HELPER}]
    script.write_text(json.dumps({"replies": replies, "record": str(record)}))
    done = cli(["-p", "pkg.total([1, 2, 3]) returns 5, it should be 6", "--model", f"scripted:{script}", "-C",
                str(ws), "--yes", "--output", "json", "--attempts", "2"], home=home, timeout=180)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["verified"] is True and report["attempt"] == 2, report
    assert (ws / "pkg" / "helpers.py").read_text() == "def positive(items):\n    return [x for x in items if x > 0]\n"
    core = (ws / "pkg" / "core.py").read_text()
    assert core.endswith("\ndef total(items):\n    return sum(positive(items))\n") and core.count("def total") == 1
    rewrites = [json.loads(line)[-1]["content"] for line in record.read_text().splitlines()][-4:]
    assert all("def total(items)" in r and "def positive" not in r for r in rewrites[:3]), rewrites
    assert "# pkg/helpers.py\ndef positive(items):" in rewrites[3] and "def total" not in rewrites[3], rewrites[3]
    assert "`positive`, which `total` calls, may hold the bug" in rewrites[3]


BOX = '''class Version:
    def __init__(self, n):
        self.n = n

    def bump(self):
        return Version(self._step(self.n) + Version._zero() + self.other())

    def other(self):
        return 0

    @classmethod
    def _step(cls, n):
        return cls._size(n) + n

    @staticmethod
    def _zero():
        return 0

    @staticmethod
    def _size(n):
        return 2


def other():
    return 1
'''


def test_a_method_s_callees_are_the_methods_of_its_class_it_calls_through_self_cls_or_the_class(
        tmp_path: Path) -> None:
    (tmp_path / "box.py").write_text(BOX)
    workspace = Workspace(tmp_path)
    bump = Place("box.py", "bump", 5, 6, whole=True)
    found = [(caller, p.name, p.first, p.last) for caller, p in callees([bump], workspace)]
    # `Version(...)` is the class, not a function; `self.other` is the method, not the module's `other`
    assert found == [("bump", "_step", 11, 13), ("bump", "_zero", 15, 17), ("bump", "other", 8, 9)]
    step = Place("box.py", "_step", 11, 13, whole=True)
    assert [(c, p.name) for c, p in callees([step], workspace)] == [("_step", "_size")]  # cls.name
    targets = Targets([bump], workspace)
    assert [targets.failed() for _ in range(PER_TARGET)] == [False, False, True]
    assert targets.places == (Place("box.py", "_step", 11, 13, whole=True),)
    assert "`_step`, which `bump` calls, may hold the bug" in targets.note()

