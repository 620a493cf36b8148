import ast
from pathlib import Path

import semver
from semver import Version, _types

assert _types.StrOrBytes.__args__ == (str, bytes), "semver/_types.py must define StrOrBytes = Union[str, bytes]"
for module in ("_types", "version"):
    tree = ast.parse(Path(semver.__file__).with_name(f"{module}.py").read_text(encoding="utf-8"))
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names]
    assert "String" not in names, f"semver/{module}.py still uses the name String"
assert Version.parse(b"1.2.3") == Version(1, 2, 3) and Version(1, 2, 3) == "1.2.3"
assert Version(1, 2, 3).compare(b"1.2.4") == -1
print("ok")
