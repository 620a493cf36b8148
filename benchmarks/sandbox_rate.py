"""Sandbox: every payload of a path traversal corpus resolved, per second (the shared corpus beside the repository
when there is one, else payloads generated here: the benchmark runs from any checkout).

"Resolved" is what a read does before it opens anything: `Workspace.exists` normalises the path lexically, refuses
one that climbs out (an error with the root's listing as a hint), and walks what is left from the root's file
descriptor, one `stat`/`openat` per component. The workspace holds a small project (20 files in 3 folders). The
lexical step alone (`Workspace.relative`) is reported beside it.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, corpus_dir, emit, median

TARGET = 50_000  # payloads per second
RUNS = 5


def generated() -> list[str]:
    """Traversal payloads made here, for a checkout without the corpus beside it: climbing sequences (plain,
    backslashed, percent- and overlong-encoded, doubled dots, `;` tricks) at depths 1-16, before three targets,
    after five prefixes."""
    steps = ["../", "..\\", "..%2f", "%2e%2e/", "%2e%2e%2f", "..%5c", "....//", "..;/", ".../", "..%c0%af",
             "%252e%252e%252f", "..//", "./../", "..\\/"]
    targets = ["etc/passwd", "sentinel.txt", "windows/win.ini"]
    prefixes = ["", "/", "./", "src/", "/tmp/"]
    return list(dict.fromkeys(prefix + step * depth + target for step in steps for depth in range(1, 17)
                              for target in targets for prefix in prefixes))


def payloads() -> list[str]:
    """The shared corpus as tests/unit/fs/test_traversal_corpus.py assembles it (both lists, the template for two
    targets) when it sits beside the repository, else the `generated` set."""
    corpus = corpus_dir("path_traversal")
    if not corpus.is_dir():
        return generated()
    out: list[str] = []
    for name in ("dotdotpwn.txt", "directory_traversal.txt"):
        out += (corpus / name).read_text(encoding="utf-8").splitlines()
    template = (corpus / "deep_traversal_template.txt").read_text(encoding="utf-8").splitlines()
    for target in ("sentinel.txt", "etc/passwd"):
        out += [line.replace("{FILE}", target) for line in template]
    return list(dict.fromkeys(p for p in out if p))


def rate(check: Callable[[str], object], paths: list[str]) -> tuple[float, float, int]:
    """(payloads per second of wall time, per second of CPU time, how many were refused)."""
    from cli_agent.contracts.envelope import ToolError

    refused = 0
    started, cpu = time.perf_counter(), time.process_time()
    for path in paths:
        try:
            check(path)
        except ToolError:
            refused += 1
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return len(paths) / wall, len(paths) / max(cpu, 1e-9), refused


def measure_rows(runs: int = RUNS) -> list[Row]:
    from cli_agent.fs.workspace import Workspace

    paths = payloads()
    source = "shared corpus" if corpus_dir("path_traversal").is_dir() else "generated"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "ws")
        for folder in ("src", "tests", "docs"):
            (root / folder).mkdir(parents=True)
            for n in range(6):
                (root / folder / f"file_{n}.py").write_text("x = 1\n")
        (root / "README.md").write_text("# project\n")
        (root / "pyproject.toml").write_text("[project]\n")
        ws = Workspace(root)
        rate(ws.exists, paths[:2000])  # warm-up
        full = [rate(ws.exists, paths) for _ in range(runs)]
        lexical = [rate(ws.relative, paths) for _ in range(runs)]
    wall, cpu = median([r[0] for r in full]), median([r[1] for r in full])
    return [Row("sandbox", f"sandbox: {len(paths):,} traversal payloads ({source})", f"{wall:,.0f} per s",
                f"≥ {TARGET:,} per s", TARGET / wall,
                f"Workspace.exists, median of {runs} passes; {full[0][2]:,} refused; the lexical check alone "
                f"(Workspace.relative): {median([r[0] for r in lexical]):,.0f} per s", cpu=f"{cpu:,.0f} per s")]


if __name__ == "__main__":
    emit(measure_rows())
