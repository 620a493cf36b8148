from markupsafe import Markup

assert Markup("Main &raquo;\t<em>About</em>").striptags() == "Main \u00bb About"
assert Markup("  a \n\n b  <br/> c ").striptags() == "a b c"
assert Markup("<p>x</p><!-- y -->  z").striptags() == "x z"
print("ok")
