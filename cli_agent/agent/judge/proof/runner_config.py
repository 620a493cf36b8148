"""What configures a project's tests besides the test files (`configures_tests`): a `conftest.py` at any depth,
`pytest.ini`, `.pytest.ini`, `tox.ini` and `noxfile.py` whole, and the test settings of `setup.cfg`
(`[tool:pytest]`, `[pytest]`, `[tox...]`) and `pyproject.toml` (`tool.pytest`, `tool.tox`, `tool.nox`,
`tool.hatch.envs`). Once the tests have failed in a run, these judge its repair as the test files do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cli_agent.validated import parse_toml

if TYPE_CHECKING:
    from cli_agent.contracts import Change

WHOLE = frozenset({"conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "noxfile.py"})
_PYPROJECT_TOOLS = ("pytest", "tox", "nox")
_CFG_SECTIONS = ("tool:pytest", "pytest")
_MAX_BYTES = 1 << 20  # a settings file larger than this is taken as a change to the test settings


def configures_tests(change: Change) -> bool:
    """Whether `change` changes what configures the project's tests (a file of `WHOLE`, or the test settings of a
    `setup.cfg` or `pyproject.toml`, at any depth)."""
    name = change.path.rsplit("/", 1)[-1]
    if name in WHOLE:
        return True
    if name not in ("pyproject.toml", "setup.cfg"):
        return False
    if max(len(change.before or b""), len(change.after or b"")) > _MAX_BYTES:
        return True
    read = _pyproject if name == "pyproject.toml" else _setup_cfg
    return read(change.before) != read(change.after)


def _pyproject(data: bytes | None) -> Any:
    """The test tools' tables of a `pyproject.toml` (one that does not parse: itself, as text)."""
    text = (data or b"").decode("utf-8", errors="replace")
    try:
        tool = parse_toml(text, "pyproject.toml", ValueError).data.get("tool", {})
    except ValueError:  # not TOML: compared as text
        return text
    if not isinstance(tool, dict):
        return tool
    hatch = tool.get("hatch")
    return ({k: tool.get(k) for k in _PYPROJECT_TOOLS}, hatch.get("envs") if isinstance(hatch, dict) else hatch)


def _setup_cfg(data: bytes | None) -> Any:
    """The test sections of a `setup.cfg` (one that does not parse: itself, as text)."""
    import configparser  # deferred: about 1 ms and 8 regular expressions, for a run that changed a setup.cfg

    text = (data or b"").decode("utf-8", errors="replace")
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return text
    return {s: dict(parser.items(s)) for s in parser.sections() if s in _CFG_SECTIONS or s.startswith("tox")}
