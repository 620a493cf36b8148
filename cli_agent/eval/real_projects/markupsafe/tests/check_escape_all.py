from markupsafe import Markup, escape_all

assert escape_all(["<a>", "b&c", 3]) == [Markup("&lt;a&gt;"), Markup("b&amp;c"), Markup("3")]
assert escape_all([]) == []
assert escape_all(x for x in ["'"]) == [Markup("&#39;")]
print("ok")
