from semver import Version

cases = [("1.2.3", True), ("1.0.0+build.5", True), ("0.9.0", False), ("1.0.0-rc.1", False), ("2.0.0-alpha", False),
         ("0.0.1", False)]
for text, expected in cases:
    got = Version.parse(text).is_stable()
    assert got is expected, f"Version.parse({text!r}).is_stable() gave {got!r}, not {expected!r}"
print("ok")
