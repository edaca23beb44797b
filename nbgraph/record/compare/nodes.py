"""Comparing two runs node by node, with the reason for each difference: `Run.compare` for
branch-lineage runs.

In a run that used branch lineages a step is not a moment both runs share, but "the k-th run of
node n" is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbgraph.primitives import MISSING
from nbgraph.record.compare.messages import IDS_ONLY, compare_values
from nbgraph.record.text import safe_str

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare_by_node"]

_COLUMNS = ["node", "occurrence", "what", "this", "other", "why"]
_IDS_WHY = f"{IDS_ONLY}: the messages say the same (role, content, name, tool calls)"


def compare_by_node(this: Any, other: Any) -> pd.DataFrame:
    """Rows: the outcome, how often each node ran, what each run of a node read, and the
    final state, where the runs differ; `why` says which rule made the difference.

    Columns: node, occurrence (-1 where a row is about all runs), what (`"outcome"`,
    `"runs"`, a field name, or `"final"`), this, other, why. Messages are compared by what
    they say; where only their ids differ, this and other are the ids and `why` says so.
    """
    import pandas as pd

    rows: list[tuple] = []
    if _outcome(this) != _outcome(other):
        rows.append(("", -1, "outcome", _outcome(this), _outcome(other), _why_outcome(this, other)))
    mine, theirs = this.tree.by_name, other.tree.by_name
    for node in [*mine, *(n for n in theirs if n not in mine)]:
        a, b = mine.get(node, []), theirs.get(node, [])
        if len(a) != len(b):
            rows.append((node, -1, "runs", len(a), len(b), _why_runs(node, this, other)))
        for k in range(min(len(a), len(b))):
            left, right = this.tree[a[k]], other.tree[b[k]]
            seen_a, seen_b = this.state_at(left), other.state_at(right)
            for name in _fields(seen_a, seen_b):
                x, y = seen_a.get(name, MISSING), seen_b.get(name, MISSING)
                row = _difference(node, k, name, x, y)
                if row is not None and not row[-1]:
                    row = (*row[:-1], _why_read(this, left, other, right))
                if row is not None:
                    rows.append(row)
    final_a, final_b = this.output, other.output
    for name in _fields(final_a, final_b):
        x, y = final_a.get(name, MISSING), final_b.get(name, MISSING)
        row = _difference("END", -1, name, x, y)
        if row is not None:
            rows.append(row if row[-1] else (*row[:-1], _why_final(name, this, other)))
    frame = pd.DataFrame(rows, columns=_COLUMNS, dtype=object)
    return frame.astype({"occurrence": "int64"}) if rows else frame


def _difference(node: str, k: int, name: str, x: Any, y: Any) -> tuple | None:
    """A row for a field that differs (its `why` empty, to fill), or None if it does not;
    messages that differ only in their ids give their ids and `_IDS_WHY`."""
    difference = compare_values(x, y)
    if difference is None:
        return None
    if difference.said or difference.ids is None:
        return (node, k, name, x, y, "")
    return (node, k, name, *difference.ids, _IDS_WHY)


def _fields(a: dict, b: dict) -> list[str]:
    return [*a, *(n for n in b if n not in a)]


def _model(run: Any) -> str:
    return "branch lineages" if run.log.semantics == "branches" else "supersteps"


def _outcome(run: Any) -> str:
    if run.error is None:
        return run.status
    return f"{run.status}: {type(run.error).__name__}: {safe_str(run.error)}"


def _why_outcome(this: Any, other: Any) -> str:
    failed = this if this.error is not None else other
    error = failed.error
    clash = error is not None and "one value per step" in safe_str(error)
    if clash and _model(failed) == "supersteps":
        return (
            "with supersteps, parallel branches write one shared state, so two writes to an "
            "overwrite field in one step are an error; branch lineages keep them apart until "
            "a join merges them"
        )
    if error is not None:
        return f"the {_model(failed)} run raised {type(error).__name__}"
    return "the runs stopped differently"


def _why_runs(node: str, this: Any, other: Any) -> str:
    for run, count in ((this, len(this.tree.by_name.get(node, []))),
                       (other, len(other.tree.by_name.get(node, [])))):  # fmt: skip
        if run.error is not None and count == 0:
            return (
                f"the {_model(run)} run failed at step {run.last_step + 1} before {node!r} "
                "ran (see the outcome row)"
            )
    branch = this if this.log.semantics == "branches" else other
    if branch.log.semantics != "branches" or this.log.semantics == other.log.semantics:
        return "the runs took different routes"
    lineages = {t.parents[0] for t in (branch.tree[i] for i in branch.tree.by_name.get(node, []))}
    if len(lineages) > 1:
        return (
            f"with branch lineages a node reached by plain edges runs once per arriving "
            f"lineage: {node!r} read {len(lineages)} different lineages; with supersteps "
            "arrivals in one step share one run (make it a join: a waiting edge, merge=, "
            "or defer=True)"
        )
    return "the two models routed it differently (a branch saw different values)"


def _why_read(this: Any, left: Any, other: Any, right: Any) -> str:
    parts = [_read_by(this, left), _read_by(other, right)]
    return "; ".join(p for p in parts if p)


def _read_by(run: Any, node: Any) -> str:
    if node.arg is not MISSING:
        return f"{_model(run)}: a Send's argument"
    if run.log.semantics != "branches":
        return f"supersteps: the shared state at the start of step {node.step}"
    point = run.tree[node.parents[0]]
    if point.kind == "join":
        return f"branches: the {point.reason} merge {point.id} of {', '.join(point.parents)}"
    if point.kind == "reset":
        return f"branches: a root reset ({point.reason}) at {point.id}"
    return "branches: its own lineage only (a sibling's writes are not visible before a join)"


def _why_final(name: str, this: Any, other: Any) -> str:
    reasons = []
    for run in (this, other):
        if run.log.semantics != "branches":
            continue
        for effect in run.effect_list:
            if effect.field != name or not effect.point.startswith("join:"):
                continue
            if effect.reducer == "fold" and effect.changed:
                reasons.append(
                    f"{effect.point} folded whole branch states through the reducer "
                    "(what the branches share is counted once per branch)"
                )
            elif effect.root_reset:
                reasons.append(f"{effect.point} merged with strategy {effect.reducer}")
            elif effect.conflict:
                won = f"; {effect.winner} won" if effect.winner else ""
                reasons.append(f"branches disagreed at {effect.point} ({effect.reducer}{won})")
    counts = []
    for node in {w for r in (this, other) for e in r.effect_list if e.field == name
                 for w in e.writers if w in r.tree.by_name}:  # fmt: skip
        a, b = len(this.tree.by_name.get(node, [])), len(other.tree.by_name.get(node, []))
        if a != b:
            counts.append(f"{node!r} wrote it and ran {a} vs {b} times")
    return (
        "; ".join(dict.fromkeys([*reasons, *counts])) or "the nodes that wrote it saw other states"
    )
