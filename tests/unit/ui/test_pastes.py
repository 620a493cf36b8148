"""Long pastes folded in the REPL's input (`ui.pastes`): a fold per long paste, expanded whole when sent."""

from __future__ import annotations

from cli_agent.ui.repl.pastes import FOLD_LINES, Pastes


def test_a_short_paste_stays_and_a_long_one_is_folded_and_expanded_back():
    pastes = Pastes()
    assert pastes.fold("a\nb\n") == "a\nb\n"
    long = "".join(f"row {i}\r\n" for i in range(FOLD_LINES + 5))
    fold = pastes.fold(long)
    assert fold == f"[Pasted text #1 +{FOLD_LINES + 5} lines]"
    line = f"look: {fold} and [Pasted text #9 +3 lines]"
    assert pastes.folded(line) == [1]
    assert pastes.expand(line) == "look: " + long.replace("\r\n", "\n").rstrip("\n") + " and [Pasted text #9 +3 lines]"
