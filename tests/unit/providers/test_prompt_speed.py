"""How fast the bundled model reads a prompt: measured on whole replies (characters the slot did not hold, over the
wait for the first token), averaged, kept on disk for the next process, and used to tell a request's wait before
it is sent."""

from __future__ import annotations

import json

from cli_agent.providers.local.prompt_speed import FILE, MEASURED_CHARS, PromptSpeed, unread_chars


def test_only_the_characters_after_the_prefix_the_slot_holds_are_read() -> None:
    system = "<system>\nYou are a coding agent.\n"
    assert unread_chars(system + "<user>\nfix calc.py\n", system) == len("<user>\nfix calc.py\n")
    assert unread_chars("abc", "") == 3 and unread_chars("abc", "abc") == 0 and unread_chars("abc", "abcdef") == 0
    assert unread_chars("abXd", "abcd") == 2  # what differs is read again, from where it differs
    long = "x" * 100_000
    assert unread_chars(long + "y", long + "z") == 1


def test_the_wait_is_unknown_until_measured_then_told_from_the_rate(tmp_path) -> None:
    speed = PromptSpeed.kept_in(tmp_path)
    assert speed.seconds(9000) is None
    speed.measured(MEASURED_CHARS - 1, 0.01)  # a short read measures the request's overhead, not the reading
    assert speed.seconds(9000) is None and not (tmp_path / FILE).exists()
    speed.measured(6000, 60.0)  # 100 characters a second
    assert speed.seconds(9000) == 90.0
    speed.measured(6000, 20.0)  # 300 a second: averaged with the earlier measure
    assert speed.seconds(4000) == 20.0
    assert json.loads((tmp_path / FILE).read_text()) == {"chars_per_s": 200.0}


def test_the_next_process_reads_the_rate_kept_and_a_damaged_file_is_not_a_rate(tmp_path) -> None:
    PromptSpeed.kept_in(tmp_path).measured(3000, 10.0)
    assert PromptSpeed.kept_in(tmp_path).seconds(600) == 2.0
    for damaged in ("{half", "[1]", '{"chars_per_s": "fast"}', '{"chars_per_s": -5}', '{"chars_per_s": 0}', ""):
        (tmp_path / FILE).write_text(damaged)
        assert PromptSpeed.kept_in(tmp_path).seconds(600) is None, damaged
    assert PromptSpeed.kept_in(None).seconds(600) is None  # no warm start: this process measures its own


def test_a_rate_that_cannot_be_kept_is_still_used_in_this_process(tmp_path) -> None:
    speed = PromptSpeed.kept_in(tmp_path / "gone")  # the folder does not exist: nothing can be written there
    speed.measured(5000, 10.0)
    assert speed.seconds(1000) == 2.0 and not (tmp_path / "gone").exists()
