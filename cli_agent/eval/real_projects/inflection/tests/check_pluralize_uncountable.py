from inflection import pluralize

for word in ("sheep", "fish", "equipment", "Information"):
    assert pluralize(word) == word, f"pluralize({word!r}) == {pluralize(word)!r}"
assert pluralize("post") == "posts", pluralize("post")
assert pluralize("octopus") == "octopi", pluralize("octopus")
assert pluralize("") == "", repr(pluralize(""))
print("ok")
