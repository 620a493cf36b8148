from inflection import quantify

cases = [((1, "post"), "1 post"), ((2, "post"), "2 posts"), ((0, "post"), "0 posts"), ((-1, "post"), "-1 post"),
         ((3, "octopus"), "3 octopi"), ((5, "sheep"), "5 sheep"), ((2, "person"), "2 people"), ((1, "person"), "1 person")]
for args, text in cases:
    assert quantify(*args) == text, f"quantify{args} == {quantify(*args)!r}, not {text!r}"
print("ok")
