"""The folder trust question in a pseudo-terminal (a pyte screen at 60 and 100 columns): asked only once a model is
settled, wrapped between words, answered with one key, and, for a config changed since it was trusted, saying
what changed."""

from __future__ import annotations

import os

import pexpect
import pytest
from screenkit import Screen
from termkit import PROMPT, Term

pytestmark = pytest.mark.slow

WIDENING = 'yes = true\napi_base = "http://127.0.0.1:9/v1"\n'
NO_KEYS = {k: None for k in os.environ if k.endswith("_API_KEY")}


def project(ws, text: str) -> None:
    (ws / ".cli-agent").mkdir(parents=True, exist_ok=True)
    (ws / ".cli-agent" / "config.toml").write_text(text)


def start(tmp_path, cols: int, replies=(), **kw) -> tuple[Term, Screen]:
    t = Term(tmp_path, list(replies) if replies is not None else None, cols=cols, wait=None, **kw)
    return t, Screen(t.child, cols)


HIDE_RUNTIME = """import sys


class _NoLocalRuntime:  # this process has no bundled-model runtime, whatever the venv holds
    def find_spec(self, name, path=None, target=None):
        if name == "xllamacpp" or name.startswith("xllamacpp."):
            raise ModuleNotFoundError(name)
        return None


sys.meta_path.insert(0, _NoLocalRuntime())
"""


def test_without_a_model_the_repl_says_so_before_asking_about_trust(tmp_path):
    project(tmp_path / "ws", WIDENING.replace("api_base", "max_retries").replace('"http://127.0.0.1:9/v1"', "99"))
    hide = tmp_path / "no_runtime"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE_RUNTIME)  # with the local extra installed, a model is always there
    t, _ = start(tmp_path, 100, replies=None, env={**NO_KEYS, "PYTHONPATH": str(hide)})
    rest = t.expect(pexpect.EOF)
    t.child.close()
    assert "cli-agent needs a model" in rest and "Trust this folder" not in rest
    assert t.child.exitstatus == 2


@pytest.mark.parametrize("cols", [60, 100])
def test_the_question_wraps_between_words_takes_one_key_and_says_what_changed(tmp_path, cols):
    ws = tmp_path / "ws"
    project(ws, WIDENING)
    t, screen = start(tmp_path, cols)
    t.expect(r"\[y/N\]")
    question = [line for line in screen.lines() if line]
    said = " ".join(" ".join(question).split())
    assert ("This folder's project config (.cli-agent/config.toml) is not trusted. Trusting it would also set: "
            "yes = True api_base = 'http://127.0.0.1:9/v1' Without trust these keys are ignored. "
            "Trust this folder? [y/N]") in said  # joined with spaces: no word was cut at the end of a line
    t.child.send("y")  # one key, no Enter
    t.expect("trusted")
    t.expect(PROMPT)
    assert t.quit() == 0

    project(ws, WIDENING + 'approval = "all"\n')
    t, screen = start(tmp_path, cols)
    t.expect(r"\[y/N\]")
    said = " ".join(" ".join(line for line in screen.lines() if line).split())
    assert "This folder's project config (.cli-agent/config.toml) changed since you trusted it on" in said
    assert "What needs trust changed: + approval = 'all' Trusting it would set:" in said
    t.child.send("n")
    t.expect("not trusted")
    t.expect(PROMPT)
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 80])
def test_keys_typed_before_the_question_is_drawn_never_answer_it_and_start_the_prompt(tmp_path, cols):
    project(tmp_path / "ws", WIDENING)
    t, _ = start(tmp_path, cols, replies=[{"text": "got your message"}])
    t.child.send("yes please")  # typed while the REPL starts, before the question is drawn
    t.expect(r"\[y/N\]")
    t.child.send("y")
    t.expect("trusted")
    t.expect(PROMPT)
    t.child.send("\r")  # the prompt starts with what was typed
    t.expect("got your message")
    t.expect(PROMPT)
    assert t.quit() == 0
    assert [r["prompt"] for r in t.traces() if r["type"] == "run_started"] == ["yes please"]


@pytest.mark.parametrize("cols", [60, 80])
def test_declined_the_banner_does_not_ask_again_but_keeps_its_other_notes(tmp_path, cols):
    project(tmp_path / "ws", WIDENING + "[web]\nallow_private = true\n")
    t, screen = start(tmp_path, cols)
    t.expect(r"\[y/N\]")
    t.child.send("n")
    t.expect("not trusted")
    t.expect(PROMPT)
    t.say("/cost")  # the banner's notes come with the first line
    t.expect("tokens")
    t.expect(PROMPT)
    said = " ".join(" ".join(line for line in screen.lines() if line).split())
    assert "cli-agent trust" not in said and "untrusted project config" not in said  # declined: not asked again
    assert "ignored web.allow_private from the project config" in said  # what no trust would let it set stays
    assert t.quit() == 0
