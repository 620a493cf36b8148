import markupsafe
from markupsafe import Markup, escape, soft_text

assert escape(soft_text(escape("<x>"))) == Markup("&lt;x&gt;")
assert soft_text(1) == "1"
assert markupsafe.soft_str is soft_text, "soft_str must stay as an alias of soft_text"
print("ok")
