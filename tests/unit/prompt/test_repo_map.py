"""The repository map: the definitions of a workspace's source files (Python by `ast`, JavaScript, TypeScript, Go and
Rust by tree-sitter), ranked by the task's words and shown with their line numbers before the first step."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from agentkit import make_agent, run

from cli_agent.fs.workspace import Workspace
from cli_agent.prompt.repo_map import Outline, repo_map


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "shop").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "shop" / "cart.py").write_text(
        "class Cart:\n    def add_item(self, item):\n        self.items.append(item)\n\n"
        "    def total_price(self):\n        return sum(i.price for i in self.items)\n\n\n"
        "def apply_discount(total, percent):\n    return total - total * percent / 100\n")
    (tmp_path / "shop" / "util.py").write_text("def unrelated():\n    pass\n")
    (tmp_path / "tests" / "test_cart.py").write_text("def test_total_price():\n    pass\n")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "price.ts").write_text(
        "export function formatPrice(value: number): string {\n  return `$${value}`;\n}\n\n"
        "class PriceTag {\n  render(): string {\n    return '';\n  }\n}\n")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "discount.go").write_text(
        "package svc\n\nfunc ApplyDiscount(total float64) float64 {\n\treturn total\n}\n")
    (tmp_path / "lib.rs").write_text("pub fn apply_discount(x: f64) -> f64 {\n    x\n}\n\nstruct Cart {}\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    return tmp_path


def test_the_outline_reads_python_and_the_tree_sitter_languages(project: Path) -> None:
    symbols = {(s.path, s.name, s.line, s.end) for s in Outline(Workspace(project)).symbols()}
    assert ("shop/cart.py", "Cart.total_price", 5, 6) in symbols
    assert ("shop/cart.py", "apply_discount", 9, 10) in symbols
    assert ("web/price.ts", "formatPrice", 1, 3) in symbols and ("web/price.ts", "PriceTag.render", 6, 8) in symbols
    assert ("svc/discount.go", "ApplyDiscount", 3, 5) in symbols
    assert ("lib.rs", "apply_discount", 1, 3) in symbols
    assert not any(path == "broken.py" for path, *_ in symbols)  # a file that does not parse is skipped


def test_the_map_ranks_what_the_task_names_and_leaves_tests_out(project: Path) -> None:
    found = repo_map("apply_discount(100, 10) returns 90.0 but the total price is wrong", Outline(Workspace(project)))
    assert found is not None
    text = found.text
    assert "shop/cart.py" in found.paths and "tests/test_cart.py" not in found.paths
    assert "shop/cart.py\n" in text and "9-10  def apply_discount(total, percent):" in text
    assert "5-6  def total_price(self):  (in Cart)" in text
    assert text.index("shop/cart.py") < text.index("web/price.ts")  # files with the whole name come first
    assert "unrelated" not in text and "tests/test_cart.py" not in text
    assert repo_map("make the README friendlier", Outline(Workspace(project))) is None


def test_the_map_keeps_to_its_budget_and_reuses_unchanged_files(project: Path, monkeypatch) -> None:
    from cli_agent.prompt import repo_map as module

    for n in range(200):
        (project / f"mod{n}.py").write_text("".join(f"def price_{k}():\n    pass\n" for k in range(20)))
    parsed: list[str] = []
    parse = module._python

    def counted(path: str, text: str) -> list:
        parsed.append(path)
        return parse(path, text)

    monkeypatch.setattr(module, "_python", counted)
    outline = Outline(Workspace(project))
    found = repo_map("price is wrong", outline, budget_tokens=100)
    assert found is not None and len(found.text) < 100 * 4 + 200
    first, parsed[:] = set(parsed), []
    started = time.monotonic()
    outline.symbols()
    assert first and not first & set(parsed)  # nothing unchanged is parsed again (counted, not timed)
    assert time.monotonic() - started < 30  # only a hang fails here: the parse budget is 1 s


def test_the_map_reaches_the_model_with_the_task(project: Path) -> None:
    from cli_agent.prompt.brief import briefer

    agent, provider = make_agent(project, [{"text": "done"}],
                                 brief=lambda ws, seen: briefer(ws, None, files=False, repo_map=True))
    run(agent, "apply_discount(100, 10) gives the wrong total")
    first = json.dumps([m.content for m in provider.requests[0].messages])
    assert "Where the task's words are defined" in first and "9-10  def apply_discount" in first


def test_line_numbers_shown_up_front_are_good_for_replace_lines_until_the_file_changes(project: Path) -> None:
    from cli_agent.prompt.brief import briefer

    fix = {"tool_calls": [{"name": "replace_lines", "arguments": {
        "path": "shop/cart.py", "start_line": 10, "end_line": 10,
        "new": "    return total - total * percent / 100.0\n"}}]}
    made: list = []  # the files read, as the brief sees them

    def brief(ws, seen):
        made.append(seen)
        return briefer(ws, seen, files=False, repo_map=True)

    agent, _ = make_agent(project, [fix, {"text": "done"}], yes=True, read_first=True, brief=brief)
    seen = made[0]
    assert seen is not None
    _, finished = run(agent, "apply_discount(100, 10) gives the wrong total")
    assert finished.exit_code == 0 and "percent / 100.0" in (project / "shop" / "cart.py").read_text()
    assert "shop/cart.py" not in seen  # the map gave line numbers, not the text: edit_file still needs a read


def test_the_verb_that_opens_a_request_does_not_rank_its_namesake(tmp_path: Path) -> None:
    (tmp_path / "cgroup.py").write_text("class PidCgroup:\n    def create(self):\n        pass\n")
    (tmp_path / "table.py").write_text("def create_table():\n    pass\n")
    assert repo_map("Create hello.py that prints hello", Outline(Workspace(tmp_path))) is None
    found = repo_map("Add logging. Create a table with create_table() first", Outline(Workspace(tmp_path)))
    assert found is not None and "create_table" in found.text and "PidCgroup" not in found.text


def test_a_name_the_task_calls_or_writes_in_backticks_ranks_first_however_short(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef nth(xs, n):\n    return xs[n]\n")
    (tmp_path / "summing.py").write_text(
        "def add_numbers_sum(a, b):\n    return a + b\n\n\ndef sum_two_numbers_returns(a, b):\n    return a + b\n")
    (tmp_path / "seq.py").write_text("def take_nth_sequence_values(xs):\n    return xs\n")
    outline = Outline(Workspace(tmp_path))
    found = repo_map("The sum of two numbers is wrong: add(2, 3) returns -1, sum numbers returns", outline)
    assert found is not None
    assert found.text.splitlines()[1] == "calc.py", found.text  # `add`: a stop word, of 3 letters
    assert "def add(a, b)" in found.text.split("\n", 3)[2]
    only = repo_map("`nth` gives the wrong item", outline)  # no other word: the backticked name alone
    assert only is not None and "def nth(xs, n)" in only.text, only
    assert repo_map("print(x) and len(y) are fine", outline) is None  # builtins are not the task's names
