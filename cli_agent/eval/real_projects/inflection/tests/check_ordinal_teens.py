from inflection import ordinalize

expected = {11: "11th", 12: "12th", 13: "13th", 113: "113th", -13: "-13th", 1: "1st", 3: "3rd", 23: "23rd",
            14: "14th", 21: "21st", 102: "102nd"}
for number, text in expected.items():
    assert ordinalize(number) == text, f"ordinalize({number}) == {ordinalize(number)!r}, not {text!r}"
print("ok")
