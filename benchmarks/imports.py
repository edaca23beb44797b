"""How long `import nbgraph` takes, measured with `python -X importtime` in fresh processes.

Run from the repo root: `.venv/bin/python benchmarks/imports.py` (`--runs K`, default 9;
`--quick`: 3 runs, what the test runs; `--before DIR`: also time the nbgraph package found in
DIR, e.g. `git archive main nbgraph | tar -x -C DIR`). Each case runs in K new interpreters,
alternating the cases so a noisy machine slows them alike; the figure is the median of the
cumulative time `-X importtime` reports for the case's top module (not the interpreter's own
start). The baselines run the same way: `import pydantic` (what nbgraph's messages are built
on) and `pass` (the interpreter's start-up imports, the sum of the top-level imports). Then the
ratios, and the slowest modules of one `import nbgraph` by cumulative time.

Bytecode: the processes write and read `.pyc` files under a temporary `PYTHONPYCACHEPREFIX`
(warmed by one import first), as a user's installed nbgraph does, even when this machine sets
`PYTHONDONTWRITEBYTECODE`; the "no bytecode cache" row compiles every module each time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent

CASES = [
    ("import nbgraph", "import nbgraph", "nbgraph", str(ROOT), True),
    ("import nbgraph (no bytecode cache)", "import nbgraph", "nbgraph", str(ROOT), False),
    ("import pydantic", "import pydantic", "pydantic", str(ROOT), True),
    ("python -c pass", "pass", None, str(ROOT), True),
]
"""(label, code, the module whose cumulative time is the figure (None: sum the top level),
the PYTHONPATH, whether a bytecode cache is used)."""


class Imports(NamedTuple):
    rows: list[tuple[int, int, str]]
    """(self µs, cumulative µs, indented name) per `-X importtime` line."""
    cpu: float
    """CPU seconds of the code."""


PYCACHE = tempfile.mkdtemp(prefix="nbgraph-imports-")

TARGET_SECONDS = 0.12


def importtime(code: str, path: str = str(ROOT), cached: bool = True) -> Imports:
    """(self µs, cumulative µs, indented name) per import line of `code` in a new process,
    and the CPU seconds `code` took there (less sensitive to a busy machine than the clock)."""
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cached:
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    timed = f"import time\nstart = time.process_time()\n{code}\nprint(time.process_time() - start)"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", timed],
        capture_output=True,
        text=True,
        env=env,
        cwd=path,  # `-c` puts the working directory first on sys.path
        check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, total, name = line.removeprefix("import time:").split("|", 2)
        rows.append((int(own), int(total), name.removeprefix(" ").rstrip()))
    return Imports(rows, float(done.stdout.split()[-1]))


def seconds(rows: list[tuple[int, int, str]], module: str | None) -> float:
    """The cumulative seconds of `module` (a top-level import), or of all top-level imports."""
    top = [(total, name) for _, total, name in rows if not name.startswith(" ")]
    if module is None:
        return sum(total for total, _ in top) / 1e6
    return max(total for total, name in top if name == module) / 1e6


def measure(cases: list, runs: int) -> dict[str, list[tuple[float, float]]]:
    """(importtime seconds, CPU seconds) per case over `runs` rounds, alternating the cases."""
    for _, code, _, path, cached in cases:
        if cached:
            importtime(code, path)  # writes the bytecode cache
    times: dict[str, list[tuple[float, float]]] = {case[0]: [] for case in cases}
    for round_ in range(runs):
        for label, code, module, path, cached in cases if round_ % 2 == 0 else cases[::-1]:
            found = importtime(code, path, cached)
            times[label].append((seconds(found.rows, module), found.cpu))
    return times


def slowest(count: int) -> tuple[list[tuple[float, float, str]], bool]:
    """The `count` modules of one `import nbgraph` with the most cumulative time (ms, self
    ms, indented name), and whether it imported pydantic."""
    rows = importtime("import nbgraph").rows
    ranked = sorted(rows, key=lambda row: row[1], reverse=True)[:count]
    pydantic = any(name.strip() == "pydantic" for *_, name in rows)
    return [(total / 1e3, own / 1e3, name) for own, total, name in ranked], pydantic


def table(times: dict[str, list[tuple[float, float]]]) -> dict[str, float]:
    """Print the table; return each case's median importtime seconds."""
    print("| case | importtime median (min-max) | CPU median |")
    print("| --- | --- | --- |")
    medians = {}
    for label, pairs in times.items():
        clock = [pair[0] for pair in pairs]
        medians[label] = statistics.median(clock)
        cpu = statistics.median(pair[1] for pair in pairs)
        print(
            f"| {label} | {medians[label] * 1e3:.1f} ms ({min(clock) * 1e3:.1f}-"
            f"{max(clock) * 1e3:.1f}) | {cpu * 1e3:.1f} ms |"
        )
    return medians


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="fresh processes per case")
    parser.add_argument("--quick", action="store_true", help="3 runs (for the test)")
    parser.add_argument("--top", type=int, default=15, help="modules to list")
    parser.add_argument("--before", help="a directory holding another nbgraph/ to time too")
    args = parser.parse_args(argv)
    runs = 3 if args.quick else args.runs
    cases = list(CASES)
    if args.before:
        before = str(Path(args.before).resolve())
        cases.insert(
            1, (f"import nbgraph from {before}", "import nbgraph", "nbgraph", before, True)
        )
    print(f"`python -X importtime`, median of {runs} fresh processes each\n")
    medians = table(measure(cases, runs))
    nbgraph, pydantic, bare = (medians[CASES[i][0]] for i in (0, 2, 3))
    print(
        f"\nimport nbgraph / import pydantic: {nbgraph / pydantic:.2f}x; "
        f"/ python -c pass: {nbgraph / bare:.2f}x"
    )
    verdict = "met" if nbgraph < TARGET_SECONDS else "NOT met"
    print(f"target: import nbgraph under {TARGET_SECONDS * 1e3:.0f} ms: {verdict}")
    modules, pydantic_loaded = slowest(args.top)
    print(f"pydantic loaded by import nbgraph: {'yes' if pydantic_loaded else 'no'}\n")
    print(f"slowest {args.top} modules of one `import nbgraph` (cumulative, self, ms):")
    for total, own, name in modules:
        print(f"{total:9.1f} {own:8.1f}  {name}")


if __name__ == "__main__":
    main()
