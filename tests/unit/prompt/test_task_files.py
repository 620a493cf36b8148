"""The right lines first: files a task names are shown with it, their relevant region numbered, within a budget."""

from __future__ import annotations

from agentkit import call, make_agent, run

from cli_agent.fs.workspace import Workspace
from cli_agent.prompt.brief import briefer
from cli_agent.prompt.task_files import task_brief
from cli_agent.tools.context import SeenFiles

LIB = ("import re\n\n\ndef helper():\n    return 1\n\n\ndef slugify(text):\n    text = text.lower()\n"
       "    return re.sub(r'\\W+', '-', text)\n\n\nclass Other:\n    pass\n")


def test_a_path_and_an_at_mention_are_shown_numbered(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/lib.py").write_text(LIB)
    (tmp_path / "notes.md").write_text("# Notes\n")
    brief = task_brief("fix src/lib.py, see @notes.md", Workspace(tmp_path))
    assert brief is not None and set(brief.paths) == {"src/lib.py", "notes.md"}
    assert " 8| def slugify(text):" in brief.text and "1| # Notes" in brief.text


def test_a_function_name_resolves_to_its_definition_only(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/text.py").write_text(LIB)
    brief = task_brief("slugify() should strip dashes at both ends", Workspace(tmp_path))
    assert brief is not None and brief.paths == ("pkg/text.py",)
    assert " 8| def slugify(text):" in brief.text and "10|     return re.sub" in brief.text
    assert "helper" not in brief.text and "class Other" not in brief.text


def test_a_dotted_module_and_a_bare_file_name_resolve(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/text.py").write_text(LIB)
    assert task_brief("in pkg.text add a function", Workspace(tmp_path)).paths == ("pkg/text.py",)
    assert task_brief("in text.py add a function", Workspace(tmp_path)).paths == ("pkg/text.py",)


def test_nothing_named_nothing_shown_and_the_budget_holds(tmp_path):
    (tmp_path / "big.py").write_text("".join(f"x{i} = {i}\n" for i in range(5000)))
    assert task_brief("what does this project do?", Workspace(tmp_path)) is None
    assert task_brief("look at ../../etc/passwd and /etc/passwd", Workspace(tmp_path)) is None
    brief = task_brief("tidy big.py", Workspace(tmp_path), budget_tokens=200)
    assert brief is not None and len(brief.text) < 200 * 4 + 400 and "read_file big.py start_line=" in brief.text


def test_the_model_sees_the_files_with_the_task_and_may_edit_at_once(tmp_path):
    (tmp_path / "lib.py").write_text(LIB)
    agent, provider = make_agent(tmp_path, [
        {"tool_calls": [call("edit_file", path="lib.py", old="    return 1\n", new="    return 2\n")]},
        {"text": "done"}], yes=True, read_first=True, brief=briefer)
    _, finished = run(agent, "make helper() return 2")
    assert finished.exit_code == 0 and "return 2" in (tmp_path / "lib.py").read_text()
    first = provider.requests[0].messages[-1].content
    assert first.startswith("make helper() return 2\n\nThe task names these files") and "4| def helper():" in first


def test_seen_files_are_noted(tmp_path):
    (tmp_path / "lib.py").write_text(LIB)
    seen = SeenFiles()
    assert briefer(Workspace(tmp_path), seen)("fix lib.py") is not None and "lib.py" in seen


VERSION = ("import re\n" + "".join(f"X{i} = {i}\n" for i in range(60)) + "\n\nclass Version:\n"
           "    @property\n    def minor(self):\n        return self._minor\n\n"
           "    def is_compatible(self, other):\n        return other.minor >= self.minor\n")


def test_a_bare_name_in_a_named_file_shows_its_definition_not_the_start_of_the_file(tmp_path):
    (tmp_path / "version.py").write_text(VERSION)
    brief = task_brief("Version(1, 1, 0).is_compatible(Version(1, 1, 5)) returns False for a later minor. "
                       "Fix is_compatible in version.py.", Workspace(tmp_path))
    assert brief is not None and brief.paths == ("version.py",)
    assert "| def is_compatible(self, other):" in brief.text.replace("    def", "def")
    assert "X0 = 0" not in brief.text  # not the file's start
    assert "def minor" not in brief.text  # a plain word ("minor") does not pull in its namesake beside a strong one
    assert "class Version" not in brief.text  # a function named by the task goes before a class


def test_a_plain_word_names_a_class_when_nothing_stronger_is_defined(tmp_path):
    (tmp_path / "version.py").write_text(VERSION)
    brief = task_brief("Add a method bump(self) to the Version class in version.py", Workspace(tmp_path))
    assert brief is not None and "| class Version:" in brief.text and "X0 = 0" not in brief.text


INFLECT = ('def ordinal(number):\n    n = abs(int(number))\n    if n % 100 in range(11, 13):\n        return "th"\n'
           '    return {1: "st", 2: "nd"}.get(n % 10, "th")\n\n\n'
           'def ordinalize(number):\n    """Examples:\n\n>>> ordinalize(1)\n    """\n'
           '    return "{}{}".format(number, ordinal(number))\n\n\n'
           'def parse(text):\n    return int(text)\n')


def test_the_functions_a_named_function_calls_are_shown_after_it(tmp_path):
    (tmp_path / "inflect").mkdir()
    (tmp_path / "inflect/__init__.py").write_text(INFLECT)
    brief = task_brief("ordinalize(13) returns '13rd' but it should be '13th'. Fix the bug in inflect/__init__.py.",
                       Workspace(tmp_path))
    assert brief is not None
    # the one the task shows first, then the one it calls, where the bug is; `__init__` of the path names nothing
    assert brief.text.index("def ordinalize") < brief.text.index("def ordinal(number)")
    assert "3|     if n % 100 in range(11, 13):" in brief.text and "def parse" not in brief.text


def test_a_word_after_fix_and_an_underscored_name_outrank_a_call_in_an_example(tmp_path):
    (tmp_path / "v.py").write_text("class V:\n    def parse(cls, s):\n        return V()\n\n"
                                   "    def __getitem__(self, i):\n        return i\n\n"
                                   "    def match(self, e):\n        return e\n")
    ws = Workspace(tmp_path)
    dunder = task_brief("V.parse('3.4.5')[0] returns (3, 4). Fix __getitem__ in v.py.", ws)
    assert dunder is not None and "def __getitem__" in dunder.text and "def parse" not in dunder.text
    fixed = task_brief("V.parse('2.0.0').match('>=1') raises KeyError. Fix match in v.py.", ws)
    assert fixed is not None and "def match" in fixed.text and "def parse" not in fixed.text


def test_a_long_class_a_method_is_added_to_is_shown_as_its_methods(tmp_path):
    methods = "".join(f"    def m{i}(self):\n        x = {i}\n        return x\n\n" for i in range(20))
    (tmp_path / "big.py").write_text('class Big:\n    """Doc.\n\nmore"""\n\n' + methods)
    brief = task_brief("Add a method is_small(self) to the Big class in big.py: True when m0() is 0.",
                       Workspace(tmp_path))
    assert brief is not None
    assert " 1| class Big:" in brief.text and " 6|     def m0(self):" in brief.text
    assert "82|     def m19(self):" in brief.text and "x = 0" not in brief.text  # def lines, no bodies


def test_a_small_file_shown_from_its_start_names_the_definitions_it_shows_whole(tmp_path):
    (tmp_path / "native.py").write_text("def _inner(s):\n    return s.replace('<', '&lt;')\n")
    brief = task_brief("escape('a & b') is wrong. Fix the bug in native.py.", Workspace(tmp_path))
    assert brief is not None and [(p.name, p.first, p.last, p.whole) for p in brief.places] == [("_inner", 1, 2, True)]


def test_a_dotted_call_names_the_function_of_that_package_when_the_task_names_no_file(tmp_path):
    (tmp_path / "inflect").mkdir()
    (tmp_path / "inflect/__init__.py").write_text("from .engine import plural\n")
    (tmp_path / "inflect/engine.py").write_text("def plural(word):\n    return _suffix(word)\n\n\n"
                                                "def _suffix(word):\n    return word + 's'\n")
    (tmp_path / "aaa_vendor.py").write_text("def plural(word):\n    return word\n")  # first in the listing
    brief = task_brief("inflect.plural('box') returns 'boxs', it should be 'boxes'", Workspace(tmp_path))
    assert brief is not None and brief.paths[0] == "inflect/engine.py", brief
    assert [p.name for p in brief.places][:1] == ["plural"]
