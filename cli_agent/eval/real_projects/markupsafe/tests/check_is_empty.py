from markupsafe import Markup

assert Markup("<p> </p>").is_empty() is True
assert Markup("").is_empty() is True
assert Markup("<b>x</b>").is_empty() is False
assert Markup("text").is_empty() is False
print("ok")
