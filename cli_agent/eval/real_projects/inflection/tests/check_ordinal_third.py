from inflection import ordinal, ordinalize

expected = {3: "3rd", 23: "23rd", 103: "103rd", -1003: "-1003rd", 13: "13th", 1: "1st", 2: "2nd", 4: "4th"}
for number, text in expected.items():
    assert ordinalize(number) == text, f"ordinalize({number}) == {ordinalize(number)!r}, not {text!r}"
assert ordinal(33) == "rd", ordinal(33)
print("ok")
