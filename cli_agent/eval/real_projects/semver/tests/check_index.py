from semver import Version

v = Version.parse("3.4.5-rc.1+build.2")
assert v[0] == 3 and v[1] == 4 and v[2] == 5, (v[0], v[1], v[2])
assert v[3] == "rc.1" and v[4] == "build.2", (v[3], v[4])
assert v[0:2] == (3, 4), v[0:2]
assert v[:3] == (3, 4, 5), v[:3]
print("ok")
