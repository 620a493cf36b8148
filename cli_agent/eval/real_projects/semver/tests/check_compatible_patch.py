from semver import Version

assert Version(1, 1, 0).is_compatible(Version(1, 1, 5)), "1.1.0 should be compatible with 1.1.5"
assert Version(1, 1, 0).is_compatible(Version(1, 1, 0)), "1.1.0 should be compatible with itself"
assert Version(1, 0, 0).is_compatible(Version(1, 1, 0)), "1.0.0 should be compatible with 1.1.0"
assert not Version(1, 1, 0).is_compatible(Version(1, 0, 0)), "1.1.0 is not compatible with 1.0.0"
assert not Version(1, 0, 0).is_compatible(Version(2, 0, 0)), "1.0.0 is not compatible with 2.0.0"
assert not Version(0, 1, 0).is_compatible(Version(0, 1, 1)), "0.x versions are compatible only with themselves"
print("ok")
