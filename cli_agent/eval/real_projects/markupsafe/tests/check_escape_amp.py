from markupsafe import Markup, escape

assert escape("a & b") == Markup("a &amp; b"), escape("a & b")
assert escape("<a href='x'>&</a>") == Markup("&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;")
assert escape("&lt;") == Markup("&amp;lt;")
print("ok")
