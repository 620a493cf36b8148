"""/compact's line counts the conversation before and after the same way, at 80 and 60 columns: a long
conversation replaced by a short summary reads `about N → M tokens` with M below N, whatever the provider
counted at its last reply."""

from __future__ import annotations

import re

import pytest
from screenkit import Terms
from termkit import PROMPT

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("cols", [80, 60])
def test_the_compacted_line_never_grows(tmp_path, cols):
    long_answer = " ".join(f"word{n}" for n in range(3000))
    replies = [{"text": long_answer, "usage": {"prompt_tokens": 12, "completion_tokens": 5}},
               {"text": "We talked about words."}]
    with Terms(tmp_path) as terms:
        t, screen = terms.start(replies, cols)
        t.say("say many words")
        t.expect(PROMPT)
        t.say("/compact")
        t.expect("compacted:")
        t.expect(PROMPT)
        said = " ".join(screen.text().rpartition("compacted:")[2].split())
        before, after = (int(n.replace(",", "")) for n in re.search(r"about ([\d,]+) → ([\d,]+) tokens", said).groups())
        assert after < before and before > 1000, said
        assert t.quit() == 0
