from markupsafe import Markup, escape, soft_str

value = escape("<User 1>")
assert type(soft_str(value)) is Markup
assert escape(soft_str(value)) == Markup("&lt;User 1&gt;")
assert soft_str(42) == "42" and type(soft_str(42)) is str
print("ok")
