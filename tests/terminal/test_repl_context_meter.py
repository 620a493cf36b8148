"""The toolbar's context meter in a pseudo-terminal (a pyte screen): it goes by the provider's own count of the
conversation, compacts near the window on its own, and after an automatic compaction shows the smaller
conversation."""

from __future__ import annotations

import pytest
from screenkit import Terms
from termkit import PROMPT

pytestmark = pytest.mark.slow


def _toolbar(screen) -> str:
    return next(line for line in reversed(screen.lines()) if "approval:" in line)


@pytest.mark.parametrize("cols", [60, 80])
def test_the_meter_follows_the_providers_count_and_drops_after_an_automatic_compaction(tmp_path, cols):
    replies = [{"text": "first answer", "usage": {"prompt_tokens": 9000, "completion_tokens": 100}},
               {"text": "- the summary", "usage": {"prompt_tokens": 9150, "completion_tokens": 20}},
               {"text": "second answer", "usage": {"prompt_tokens": 1200, "completion_tokens": 20}}]
    with Terms(tmp_path) as terms:
        t, screen = terms.start(replies, cols, config="context_window = 10000\n", env={"PROMPT_TOOLKIT_NO_CPR": None})
        t.say("first question")
        t.expect("first answer")
        t.expect("context 91%")  # 9,100 of 10,000 tokens, as the provider counted them
        t.say("next")
        t.expect("compacting")
        t.expect("second answer")
        t.expect(PROMPT)
        t.expect("approval:")
        assert "91%" not in _toolbar(screen) and "ctx" not in _toolbar(screen)  # 1,220 tokens: 12%, not shown
        assert t.quit() == 0
