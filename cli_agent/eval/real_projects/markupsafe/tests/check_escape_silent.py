from markupsafe import Markup, escape_silent

assert escape_silent(None) == Markup(""), repr(escape_silent(None))
assert escape_silent("") == Markup("")
assert escape_silent("<b>") == Markup("&lt;b&gt;")
print("ok")
