from semver import Version

cases = [("1.2.3-rc.1", "1.2.3-rc.2"), ("1.2.3-rc.9", "1.2.3-rc.10"), ("1.2.3", "1.2.3-rc.1"),
         ("1.2.3-alpha.1.41", "1.2.3-alpha.1.42")]
for old, new in cases:
    got = str(Version.parse(old).bump_prerelease())
    assert got == new, f"{old} bump_prerelease() gave {got}, not {new}"
got = str(Version.parse("1.2.3+build.7").bump_build())
assert got == "1.2.3+build.8", got
print("ok")
