"""SKILL.md front matter: the YAML subset the format uses, read without executing anything."""

from __future__ import annotations

import pytest

from cli_agent.instructions.front_matter import split_front_matter


def test_plain_quoted_block_list_and_mapping():
    text = ("---\nname: pdf-forms\ndescription: 'Fill PDF forms: it''s quick.'\nlicense: \"MIT\"  \n"
            "compatibility: >\n  Python 3.11\n  and pdftk\nallowed-tools:\n  - Read\n  - Bash\n"
            "metadata:\n  author: team\n  version: \"1.0\"\n---\n# Body\ntext\n")
    fields, body = split_front_matter(text)
    assert fields == {"name": "pdf-forms", "description": "Fill PDF forms: it's quick.", "license": "MIT",
                      "compatibility": "Python 3.11 and pdftk", "allowed-tools": ("Read", "Bash"),
                      "metadata": {"author": "team", "version": "1.0"}}
    assert body == "# Body\ntext"


def test_nothing_is_evaluated():
    fields, _ = split_front_matter("---\nname: !!python/object:os.system ls\ndescription: &a x\n---\n")
    assert fields["name"] == "!!python/object:os.system ls" and fields["description"] == "&a x"


@pytest.mark.parametrize(("text", "says"), [
    ("# no front matter\n", "does not start with a '---' line"),
    ("---\nname: x\n", "no closing '---' line"),
    ("---\nname x\n---\n", "line 2: expected 'key: value'"),
])
def test_malformed_front_matter_says_what(text, says):
    with pytest.raises(ValueError, match=says):
        split_front_matter(text)


def test_an_endless_front_matter_costs_little():
    with pytest.raises(ValueError, match="no closing"):
        split_front_matter("---\n" + "k: v\n" * 1_000_000)
