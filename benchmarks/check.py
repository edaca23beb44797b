"""`python -m benchmarks --check`: this run's LangGraph/nbgraph ratios against the table
committed in benchmarks/README.md, and the rows that fell by more than the noise.

A row regressed when its ratio now is below the committed one by more than the noise:
`now < committed * (1 - noise)`. The noise is measured on this run, row by row: the spread
of the per-round ratios (each round times both engines back to back), `(max - min) /
median`, and never less than `TOLERANCE` (a single round has no spread; the committed
table is one noisy run too). Rows only one of the two tables has, and rows without a ratio
(nbgraph only), are listed, not judged. The exit code is 1 when a row regressed, else 0.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent / "README.md"
TOLERANCE = 0.10  # the least noise assumed for a row: 10% of its ratio
_RATIO = re.compile(r"^([\d,]+(?:\.\d+)?)×$")


def committed_ratios(text: str) -> dict[str, float | None]:
    """The results table of a README (the first table whose header starts with
    `| workload |` and has a `LangGraph/nbgraph` column): workload -> ratio (None: "—").

    Raises:
        ValueError: no such table.
    """
    lines = text.splitlines()
    headers = [
        (index, cells)
        for index, cells in enumerate(map(_cells, lines))
        if cells[:1] == ["workload"] and "LangGraph/nbgraph" in cells
    ]
    if not headers:
        raise ValueError("no results table (a '| workload | ... | LangGraph/nbgraph |' header)")
    start, header = headers[0]
    column = header.index("LangGraph/nbgraph")
    ratios: dict[str, float | None] = {}
    for line in lines[start + 2 :]:
        cells = _cells(line)
        if not cells:
            break
        if len(cells) > column:
            ratios[cells[0]] = parse_ratio(cells[column])
    return ratios


def _cells(line: str) -> list[str]:
    line = line.strip()
    if not line.startswith("|"):
        return []
    return [cell.strip() for cell in line.strip("|").split("|")]


def parse_ratio(cell: str) -> float | None:
    """`"14.4×"` -> 14.4; anything else (`"—"`, empty) -> None."""
    found = _RATIO.match(cell.strip())
    return float(found.group(1).replace(",", "")) if found else None


def noise_of(round_ratios: Sequence[float], tolerance: float = TOLERANCE) -> float:
    """The relative spread of a row's per-round ratios, at least `tolerance`."""
    if len(round_ratios) < 2:
        return tolerance
    middle = statistics.median(round_ratios)
    spread = (max(round_ratios) - min(round_ratios)) / middle if middle > 0 else 0.0
    return max(spread, tolerance)


@dataclass
class Verdict:
    """One row of this run against the committed table."""

    label: str
    committed: float | None
    now: float | None
    noise: float
    regressed: bool

    def line(self) -> str:
        if self.committed is None or self.now is None:
            where = "this run" if self.committed is None else "the committed table"
            return f"  {self.label}: not compared (no ratio in {where})"
        change = self.now / self.committed - 1
        return (
            f"  {self.label}: {self.committed:.1f}× committed, {self.now:.1f}× now "
            f"({change:+.0%}; noise ±{self.noise:.0%})"
        )


def verdicts(
    rows: Iterable[Any], committed: dict[str, float | None], tolerance: float = TOLERANCE
) -> list[Verdict]:
    """Each row with a ratio (a `compare.Row`: `label`, `ratio`, `round_ratios`) that the
    committed table has too, judged; the other rows of either, unjudged."""
    found = []
    seen = set()
    for row in rows:
        seen.add(row.label)
        if row.label not in committed:
            continue
        before, now = committed[row.label], row.ratio
        noise = noise_of(getattr(row, "round_ratios", ()), tolerance)
        fell = before is not None and now is not None and now < before * (1 - noise)
        found.append(Verdict(row.label, before, now, noise, fell))
    return found


def report(rows: Sequence[Any], text: str, tolerance: float = TOLERANCE) -> tuple[str, int]:
    """What `--check` prints, and its exit code (1: a row regressed)."""
    committed = committed_ratios(text)
    judged = verdicts(rows, committed, tolerance)
    fell = [v for v in judged if v.regressed]
    rated = [v for v in judged if v.committed is not None and v.now is not None]
    lines = [
        f"--check: {len(rated)} rows compared with the committed table; "
        f"{len(fell)} regressed by more than the noise (the spread of this run's per-round "
        f"ratios, at least {tolerance:.0%})"
    ]
    if fell:
        lines.append("REGRESSED:")
        lines.extend(v.line() for v in fell)
    kept = [v for v in rated if not v.regressed]
    if kept:
        lines.append("within the noise or better:")
        lines.extend(v.line() for v in kept)
    missing = [row.label for row in rows if row.label not in committed and row.ratio is not None]
    if missing:
        lines.append("not in the committed table (other sizes, or new rows): " + "; ".join(missing))
    if not rated:
        lines.append("nothing compared: run the sizes of the committed table (not --quick)")
    one_sided = [v for v in judged if v not in rated and (v.committed, v.now) != (None, None)]
    lines.extend(v.line() for v in one_sided)
    return "\n".join(lines), 1 if fell else 0
