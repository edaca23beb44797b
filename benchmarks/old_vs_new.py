"""An older nbgraph tree against the current one: compare.py's workloads, both in one process.

Run from the repo root: `.venv/bin/python benchmarks/old_vs_new.py --before DIR`, where DIR
holds the older `nbgraph/` package (a worktree: `git worktree add /tmp/old COMMIT`; or
`mkdir /tmp/old && git archive COMMIT nbgraph | tar -x -C /tmp/old`). `--rounds K` (default
7); `--quick`: tiny sizes, one round (a few seconds, what the test runs, with `--before .`);
`--imports`: then `import nbgraph`, old against new, in fresh processes (`imports.py
--before DIR`); `--only TEXT` (repeatable): only the rows whose label contains TEXT.

The older package is copied into a temporary directory as `nbgraph_before`, its absolute
imports and the module names it writes as text (`"nbgraph.messages"` for `importlib`,
`__module__` set and compared, the `"nbgraph."` prefix its reducer checks test) rewritten to
`nbgraph_before`; it is imported beside the current `nbgraph` (the one in this repository,
ahead of any installed copy). After the runs, the copy's modules are searched for anything
from the current package (a name the rewrite missed), and any found is printed.

Each workload is built once on each tree from compare.py's functions (`api_nbgraph(package)`).
Every round times one call on each, alternating which goes first, each after a garbage
collection; the table gives the median wall and CPU time (`time.process_time`: every thread of
this process, so a saver's background writes count) per step, task or checkpoint, the ratio
old/new of the medians (above 1: the new tree is faster) and the range of the per-round
ratios (both trees timed back to back: how far the machine's noise moves the ratio).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
HERE = str(ROOT / "benchmarks")
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from compare import (  # noqa: E402
    DURABILITY,
    QUICK,
    Case,
    Sizes,
    agent_case,
    api_nbgraph,
    duration,
    fan_out_case,
    history_case,
    loop_case,
    sends_case,
    subgraph_case,
)
from timing import call_times  # noqa: E402

BEFORE = "nbgraph_before"
"""The name the older package is imported under."""

SIZES = dataclasses.replace(Sizes(), loops=(1000, 10_000))
QUICK_SIZES = dataclasses.replace(QUICK, loops=(20, 50))

Build = Callable[[SimpleNamespace], Case]
"""A workload built on one tree's api (compare.py's `*_case` functions)."""

_IMPORT = re.compile(r"\b(from|import) nbgraph\b")
_DOTTED = re.compile(r"\bnbgraph\.(?=[\w\"'])")  # a module path, or the "nbgraph." prefix


def rewrite(source: str) -> str:
    """`source` of the older package, its references to `nbgraph` turned to `nbgraph_before`:
    `from nbgraph import x`, `import nbgraph.x`, and every `nbgraph.` followed by a name or a
    quote (in code and strings alike: `importlib.import_module("nbgraph.messages")`,
    `__module__ = "nbgraph.messages"`, `module.startswith("nbgraph.")`; in comments and
    messages it does no harm). `"nbgraph"` alone (the message kind) and `nbgraph_meta` stay.

    >>> rewrite('from nbgraph.messages import x\\nM.__module__ = "nbgraph.messages"')
    'from nbgraph_before.messages import x\\nM.__module__ = "nbgraph_before.messages"'
    >>> rewrite('from nbgraph import messages; s.startswith("nbgraph."); kind = "nbgraph"')
    'from nbgraph_before import messages; s.startswith("nbgraph_before."); kind = "nbgraph"'
    """
    return _DOTTED.sub(f"{BEFORE}.", _IMPORT.sub(rf"\1 {BEFORE}", source))


def copy_package(before: Path, folder: Path) -> Path:
    """`before/nbgraph` copied to `folder/nbgraph_before`, every `.py` file rewritten."""
    source = before / "nbgraph"
    if not (source / "__init__.py").is_file():
        raise SystemExit(f"--before {before}: no nbgraph/__init__.py there")
    target = folder / BEFORE
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in target.rglob("*.py"):
        path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    return target


def _forget_before() -> None:
    for name in [name for name in sys.modules if name.split(".")[0] == BEFORE]:
        del sys.modules[name]


@contextmanager
def before_package(before: Path) -> Iterator[ModuleType]:
    """The older package, imported as `nbgraph_before` from a rewritten copy (kept while the
    block runs: it imports some modules on first use); forgotten afterwards."""
    _forget_before()
    with tempfile.TemporaryDirectory(prefix="nbgraph-before-") as folder:
        copy_package(before, Path(folder))
        sys.path.insert(0, folder)
        importlib.invalidate_caches()
        try:
            yield importlib.import_module(BEFORE)
        finally:
            sys.path.remove(folder)
            _forget_before()


def current_package() -> ModuleType:
    """`nbgraph` from this repository (ahead of an installed copy, e.g. an editable install
    of another checkout)."""
    if "nbgraph" not in sys.modules and sys.path[0] != str(ROOT):
        sys.path.insert(0, str(ROOT))
    import nbgraph

    found = Path(nbgraph.__file__).resolve().parent
    if found != ROOT / "nbgraph":
        raise SystemExit(f"the current nbgraph is {found}, not this repository's {ROOT}")
    return nbgraph


def leaks() -> list[str]:
    """Names in the copy's modules that come from the current `nbgraph` (what the rewrite
    missed: a module, or a class or function made there)."""
    found = []
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != BEFORE:
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, ModuleType):
                origin = value.__name__
            else:
                try:
                    origin = getattr(value, "__module__", None)
                except Exception:  # an object whose attributes fail: not ours to judge
                    continue
            if isinstance(origin, str) and origin.split(".")[0] == "nbgraph":
                found.append(f"{name}.{attribute} (from {origin})")
    return found


def revision(folder: Path) -> str:
    """`git describe`-like text for a tree: its commit, '+changes' if it has any."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return "not a git tree"
    return commit + (" +changes" if git("status", "--porcelain", "--", "nbgraph") else "")


# --- measuring ------------------------------------------------------------------------------


@dataclass
class Row:
    label: str
    unit: str
    wall: dict[str, list[float]] = field(default_factory=dict)  # "old"/"new" -> s per unit
    cpu: dict[str, list[float]] = field(default_factory=dict)
    note: str = ""  # why the row has no times

    def ratio(self, times: dict[str, list[float]]) -> float | None:
        """old/new of the medians (above 1: new is faster)."""
        if not times:
            return None
        return statistics.median(times["old"]) / statistics.median(times["new"])

    def spread(self, times: dict[str, list[float]]) -> tuple[float, float] | None:
        """The smallest and largest per-round old/new ratio."""
        if not times:
            return None
        ratios = [old / new for old, new in zip(times["old"], times["new"], strict=True)]
        return min(ratios), max(ratios)


def versus(
    label: str,
    unit: str,
    build: Build,
    apis: dict[str, SimpleNamespace],
    rounds: int,
) -> Row:
    """`build(api)` on both trees, warmed up once, then `rounds` alternating rounds."""
    row = Row(label, unit)
    cases: dict[str, Case] = {}
    try:
        for which, api in apis.items():
            try:
                cases[which] = build(api)
                cases[which].call()  # warm-up: first-use caches are not the workload's
            except ModuleNotFoundError as error:
                row.note = f"skipped ({error})"
                return row
            except Exception as error:  # an older tree may lack what a workload uses
                traceback.print_exc()
                row.note = f"failed on the {which} tree: {type(error).__name__}: {error}"
                return row
        wall: dict[str, list[float]] = {which: [] for which in apis}
        cpu: dict[str, list[float]] = {which: [] for which in apis}
        order = list(apis)
        for i in range(rounds):
            for which in order if i % 2 == 0 else reversed(order):
                seconds, processor = call_times(cases[which].call)
                wall[which].append(seconds / cases[which].units)
                cpu[which].append(processor / cases[which].units)
        row.wall, row.cpu = wall, cpu
    finally:
        for case in cases.values():
            case.close()
    print(f"  done: {label}", file=sys.stderr, flush=True)
    return row


def workloads(sizes: Sizes, folder: str) -> list[tuple[str, str, Build]]:
    """(label, unit, build) per row: compare.py's workloads, with its labels."""
    rows: list[tuple[str, str, Build]] = []
    for steps in sizes.loops:
        rows.append((f"self-loop, {steps:,} steps", "step", lambda api, n=steps: loop_case(api, n)))
    rows.append(
        (
            f"self-loop + MemorySaver, {sizes.saver:,} steps",
            "step",
            lambda api: loop_case(api, sizes.saver, "memory", durability=DURABILITY),
        )
    )
    rows.append(
        (
            f"self-loop + SqliteSaver (file), {sizes.saver:,} steps",
            "step",
            lambda api: loop_case(api, sizes.saver, "sqlite", folder, DURABILITY),
        )
    )
    for width in sizes.fan_outs:
        rows.append(
            (f"fan-out {width:,} + waiting join", "task", lambda api, w=width: fan_out_case(api, w))
        )
    for count in sizes.sends:
        rows.append((f"{count:,} Sends + reduce", "task", lambda api, c=count: sends_case(api, c)))
    agent = f"agent, 20 nodes, add_messages, {sizes.agent_rounds} rounds"
    rows.append((agent, "step", lambda api: agent_case(api, sizes.agent_rounds)))
    rows.append(
        (
            agent.replace("add_messages,", "add_messages, langchain messages,"),
            "step",
            lambda api: agent_case(api, sizes.agent_rounds, langchain=True),
        )
    )
    rows.append(
        (
            f"subgraph as a node, two nodes, {sizes.subgraph_calls:,} calls",
            "call",
            lambda api: subgraph_case(api, sizes.subgraph_calls),
        )
    )
    for saver in ("memory", "sqlite"):
        rows.append(
            (
                f"get_state_history, {sizes.history:,}-step thread, {saver} saver",
                "checkpoint",
                lambda api, s=saver: history_case(api, sizes.history, s, folder),
            )
        )
    return rows


# --- the table ------------------------------------------------------------------------------


def _ratio(value: float) -> str:
    return f"{value:.2f}×"


def table(rows: list[Row]) -> str:
    header = [
        "workload",
        "old wall",
        "new wall",
        "old/new wall",
        "per round (min..max)",
        "old CPU",
        "new CPU",
        "old/new CPU",
        "per round (min..max)",
    ]
    lines = [header, ["---"] * len(header)]
    for row in rows:
        cells = [row.label]
        if row.note:
            cells += [row.note] + ["—"] * (len(header) - 2)
            lines.append(cells)
            continue
        for times in (row.wall, row.cpu):
            cells += [duration(statistics.median(times[which]), row.unit) for which in times]
            low, high = row.spread(times)
            cells += [_ratio(row.ratio(times)), f"{low:.2f}..{high:.2f}"]
        lines.append(cells)
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


# --- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before", required=True, help="a directory holding the older nbgraph/ package"
    )
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 7; quick 1)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    parser.add_argument(
        "--imports",
        action="store_true",
        help="then time `import nbgraph`, old against new (imports.py --before DIR)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TEXT",
        help="only the rows whose label contains TEXT (repeatable)",
    )
    args = parser.parse_args(argv)
    before = Path(args.before).resolve()
    sizes = QUICK_SIZES if args.quick else SIZES
    rounds = args.rounds or (1 if args.quick else 7)
    started = time.perf_counter()
    new = current_package()
    rows: list[Row] = []
    with before_package(before) as old, tempfile.TemporaryDirectory() as folder:
        apis = {"old": api_nbgraph(old, BEFORE), "new": api_nbgraph(new, "nbgraph")}
        for label, unit, build in workloads(sizes, folder):
            if args.only and not any(text in label for text in args.only):
                continue
            rows.append(versus(label, unit, build, apis, rounds))
        missed = leaks()
        modules = sum(name.split(".")[0] == BEFORE for name in sys.modules)

    print(
        f"old: {before} ({revision(before)}), imported as {BEFORE}; new: {ROOT} "
        f"({revision(ROOT)})\n{rounds} round(s), alternating, medians per unit; old/new above "
        f"1: new is faster; Python {platform.python_version()}, {os.cpu_count()} cores; "
        f"{time.perf_counter() - started:.0f} s in all\n"
    )
    print(table(rows))
    if missed:
        print(f"\nWARNING: the copy uses the current nbgraph in {len(missed)} place(s):")
        print("\n".join(f"  {name}" for name in missed))
    else:
        print(f"\nthe copy: {modules} modules of {BEFORE}, none using the current nbgraph")
    if args.imports:
        import imports

        print()
        imports.main(["--before", str(before)] + (["--quick"] if args.quick else []))
    return rows


if __name__ == "__main__":
    main()
