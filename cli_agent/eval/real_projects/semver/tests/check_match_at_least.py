from semver import Version

cases = [("2.0.0", ">=1.0.0", True), ("1.0.0", ">=1.0.0", True), ("0.9.0", ">=1.0.0", False),
         ("1.0.0", "<=1.0.0", True), ("1.0.0", ">1.0.0", False), ("1.0.0", "!=1.0.1", True)]
for version, expr, expected in cases:
    got = Version.parse(version).match(expr)
    assert got is expected, f"Version.parse({version!r}).match({expr!r}) gave {got!r}, not {expected!r}"
print("ok")
