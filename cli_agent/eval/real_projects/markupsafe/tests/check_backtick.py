from markupsafe import Markup, escape

assert escape("`x`") == Markup("&#96;x&#96;"), escape("`x`")
assert escape("<`>") == Markup("&lt;&#96;&gt;")
assert escape("a & b") == Markup("a &amp; b")
print("ok")
