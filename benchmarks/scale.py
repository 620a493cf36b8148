"""Real repositories at full speed: search against `rg`, a one-line edit of a 20 MB file against `sed -i`, a page
of a 50 MB file, each alternated with its peer and reported as the ratio of medians.

    python benchmarks/scale.py [RUNS]

Our side is timed in-process (the tool call as a running session makes it: `search`, `edit_file` + `apply`,
`read_file`), the peer as a whole process (`rg`, `sed -i`), one after the other, RUNS times each. Peak memory is
measured in a child process (its own high-water mark, `VmHWM`, which unlike `ru_maxrss` does not
start from the parent's size at fork) over a child that imports the same modules and does nothing: the
difference is what the operation itself costs. The trees and files are generated in a temp folder.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, Row, emit, load_note, median

RUNS = 5
WORDS = ["alpha", "beta", "gamma", "delta", "value", "result", "config", "handler", "needle", "parse"]


def alternated(ours: Callable[[], object], peer: list[str], cwd: Path, runs: int) -> tuple[list[float], list[float]]:
    """Wall seconds of `ours()` (in-process) and of the `peer` process, in turn, after one warm-up of each."""
    a, b = [], []
    for i in range(runs + 1):
        started = time.perf_counter()
        ours()
        took = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run(peer, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        peer_took = time.perf_counter() - started
        if i:
            a.append(took)
            b.append(peer_took)
    return a, b


def spread(values: list[float]) -> str:
    return f"min {min(values) * 1000:.1f} / median {median(values) * 1000:.1f} / max {max(values) * 1000:.1f} ms"


def tree(root: Path, files: int, matches_every: int) -> int:
    """`files` source files in folders of 100; every `matches_every`-th line holds "needle". The match count."""
    rnd = random.Random(17)
    count = 0
    for n in range(files):
        folder = root / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for k in range(40):
            if (n * 40 + k) % matches_every == 0:
                lines.append(f"    found = needle_{n}_{k}(value)")
                count += 1
            else:
                lines.append("    " + " ".join(rnd.choice(WORDS) for _ in range(6)))
        (folder / f"mod{n}.py").write_text("\n".join(lines) + "\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    return count


def rg() -> str:
    from cli_agent.tools.handlers.ripgrep import rg_binary

    exe = rg_binary()
    if exe is None:
        raise SystemExit("rg is not installed (the `ripgrep` package ships it)")
    return exe


def search_rows(tmp: Path, runs: int) -> list[Row]:
    from cli_agent.fs.workspace import Workspace
    from cli_agent.tools.handlers import ToolContext, files

    rows = []
    small = tmp / "k1"
    tree(small, 1000, 97)
    ctx = ToolContext(Workspace(small))
    ours, peer = alternated(lambda: files.search(ctx, "needle_[0-9]+"), [rg(), "-n", "needle_[0-9]+", "."], small,
                            runs)
    ratio = median(ours) / median(peer)
    rows.append(Row("search_1k", "`search` vs `rg`, 1k files", f"{ratio:.2f}× rg", "≤ 2× rg", ratio / 2,
                    f"ours (in-process tool call) {spread(ours)}; rg (process) {spread(peer)}"))
    big = tmp / "many"
    many = 100_000 if runs >= 3 else 20_000  # a quick run (RUNS < 3) builds a smaller tree, and says so
    planted = tree(big, many, 4163)
    ctx = ToolContext(Workspace(big))
    started = time.perf_counter()
    result = files.search(ctx, "needle_[0-9]+")
    took = time.perf_counter() - started
    rg_count = subprocess.run([rg(), "-c", "--no-filename", "needle_[0-9]+", "."], cwd=big, capture_output=True,
                              text=True, check=False).stdout.split()
    counted = sum(int(x) for x in rg_count)
    complete = result["total"] == counted == planted and not result.get("skipped")
    rows.append(Row("search_many", f"`search`, {many // 1000}k files: every match counted",
                    f"{result['total']} of {counted} (rg) counted, {result['count']} shown",
                    "every match up to the cap", 1.0 if complete else 9.99,
                    f"{took:.1f} s in-process; cap {result['count']}; notice: {result.get('notice', '')}"))
    shutil.rmtree(big)
    huge = tmp / "mb200"
    huge.mkdir()
    line = b"2026-11-23 21:00:00 INFO request served in 12 ms from cache shard 7\n"
    with open(huge / "app.log", "wb") as fh:
        for _ in range((200 << 20) // (len(line) * 1000)):
            fh.write(line * 999 + b"2026-11-23 21:00:01 ERROR needle timeout\n")
    ctx = ToolContext(Workspace(huge))
    ours, peer = alternated(lambda: files.search(ctx, "ERROR needle"), [rg(), "-c", "ERROR needle", "."], huge,
                            max(2, runs // 2))
    found = files.search(ctx, "ERROR needle")["total"]
    ratio = median(ours) / median(peer)
    rows.append(Row("search_200mb", "`search` on one 200 MB file", f"{found} matches, {ratio:.2f}× rg",
                    "found, streamed (≤ 2× rg)", ratio / 2 if found else 9.99,
                    f"ours {spread(ours)}; rg {spread(peer)}"))
    shutil.rmtree(huge)
    return rows


_EDIT_CHILD = textwrap.dedent("""
    import sys
    from cli_agent.fs.workspace import Workspace
    from cli_agent.tools.handlers import ToolContext, files
    ctx = ToolContext(Workspace(sys.argv[1]))
    files.read_file(ctx, "small.txt")
    if sys.argv[2] == "edit":
        change = files.edit_file(ctx, "big.py", sys.argv[3], sys.argv[4])
        change.diff()
        ctx.workspace.apply(change)
    elif sys.argv[2] == "read":
        page = files.read_file(ctx, "big.txt", int(sys.argv[3]), int(sys.argv[3]))
        assert page["total_lines"] == int(sys.argv[4]), page["total_lines"]
    status = open("/proc/self/status").read()
    print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
""")


def child_peak(folder: Path, *args: str) -> int:
    """Peak RSS (KiB) of a child doing `args`, minus that of a child doing nothing with the same imports."""
    def peak(*what: str) -> int:
        out = subprocess.run([sys.executable, "-c", _EDIT_CHILD, str(folder), *what], capture_output=True,
                             text=True, check=True, cwd=REPO)
        return int(out.stdout.split()[-1])
    return peak(*args) - peak("nothing")


def file_rows(tmp: Path, runs: int) -> list[Row]:
    from cli_agent.fs.workspace import Workspace
    from cli_agent.tools.handlers import ToolContext, files

    folder = tmp / "files"
    folder.mkdir()
    (folder / "small.txt").write_text("a\n")
    code = "x = compute(value, other_value)  # a line of ordinary code\n"
    count = (20 << 20) // len(code)
    (folder / "big.py").write_text(code * (count // 2) + "TARGET = 0\n" + code * (count // 2))
    size = (folder / "big.py").stat().st_size
    ctx = ToolContext(Workspace(folder))
    state = {"n": 0}

    def edit() -> None:
        old, new = f"TARGET = {state['n']}", f"TARGET = {state['n'] + 1}"
        change = files.edit_file(ctx, "big.py", old, new)
        change.diff()
        ctx.workspace.apply(change)
        state["n"] += 1

    ours, peer = alternated(edit, ["sed", "-i", "s/^TARGET = /TARGET = /", "big.py"], folder, runs)
    grown = child_peak(folder, "edit", f"TARGET = {state['n']}", "TARGET = done") * 1024
    rows = [Row("edit_20mb", "`edit_file`, one line of a 20 MB file", f"{median(ours):.2f} s, {grown / size:.1f}× "
                f"the file in memory", "≤ 1 s and ≤ 3× the file", max(median(ours) / 1.0, grown / size / 3),
                f"ours (plan, diff, apply) {spread(ours)}; sed -i (process) {spread(peer)}, "
                f"{median(ours) / median(peer):.1f}× sed")]
    text_line = b"row of a log file with some words in it\n"
    lines = (50 << 20) // len(text_line)
    (folder / "big.txt").write_bytes(text_line * lines)
    middle = lines // 2

    def read() -> None:
        page = files.read_file(ctx, "big.txt", middle, middle)
        assert page["total_lines"] == lines

    ours, peer = alternated(read, ["sed", "-n", f"{middle}p", "big.txt"], folder, runs)
    grown = child_peak(folder, "read", str(middle), str(lines)) * 1024
    rows.append(Row("read_50mb", "`read_file`, a line in the middle of a 50 MB file",
                    f"{median(ours):.2f} s, {grown / (1 << 20):.0f} MB over the baseline, exact count",
                    "≤ 64 MB, exact counts", grown / (64 << 20),
                    f"ours {spread(ours)}; sed -n (process) {spread(peer)}, {median(ours) / median(peer):.1f}× sed"))
    return rows


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    print(load_note())
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        rows = search_rows(tmp, runs) + file_rows(tmp, runs)
    print(load_note())
    emit(rows)


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    main()
