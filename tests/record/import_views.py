"""The record of a run in a comparable form, for the proofs that a LangGraph thread imported
into nbgraph's record (`Run.from_langgraph`) agrees with nbgraph's own record of the same
program (tests/record/test_langgraph_import.py, test_langgraph_import_subgraphs.py)."""

from typing import Any

from tests.support.harness import plain, stable_repr

EFFECT_KEYS = (
    "step", "field", "reducer", "writers", "writes", "before", "after", "changed", "applied",
    "conflict", "overwrite_bypass", "dropped_key", "root_reset",
)  # fmt: skip


def record_view(run: Any) -> dict:
    """What must agree between the two records, in a comparable form."""
    effects = [
        tuple(stable_repr(plain(_cell(getattr(row, key)))) for key in EFFECT_KEYS)
        for row in run.effect_list
    ]
    steps = [
        (t.step, t.node, t.kind, tuple(t.triggers), _status(t), stable_repr(plain(t.writes)))
        for t in run.log.tasks()
        if t.kind != "input"
    ]
    tree = sorted((n.id, n.kind, tuple(n.parents)) for n in run.tree.nodes.values())
    return {
        "effects": effects,
        "steps": steps,
        "final": stable_repr(plain(dict(run.output))),
        "tree": tree,
        "status": run.status,
    }


def _cell(value: Any) -> Any:
    return list(value) if type(value).__name__ == "ListPrefix" else value


def _status(task: Any) -> str:
    if task.error is not None:
        return f"error {type(task.error).__name__}"
    return "interrupted" if task.interrupts else "ok"


def differences(a: dict, b: dict) -> list[str]:
    return [key for key in a if a[key] != b[key]]


def capture_apps(api: Any) -> list:
    """Have `api.StateGraph(...).compile()` keep each app it makes in the returned list."""
    apps: list = []
    base = api.StateGraph

    class Capturing(base):
        def compile(self, *args, **kwargs):
            app = super().compile(*args, **kwargs)
            apps.append(app)
            return app

    api.StateGraph = Capturing
    return apps


def thread_view(run: Any) -> dict:
    """`record_view` with the tree's fork nodes named by their place in `log.branches`."""
    names = {f"fork:{r.checkpoint_id}": f"fork:{i}" for i, r in enumerate(run.log.branches)}
    view = record_view(run)
    view["tree"] = sorted(
        (names.get(i, i), kind, tuple(names.get(p, p) for p in parents))
        for i, kind, parents in view["tree"]
    )
    view["forks"] = [(r.step, r.source) for r in run.log.branches]
    return view


def deep_view(run: Any) -> dict:
    """`thread_view` of a run and, under `subruns`, of each subrun (with its task id)."""
    view = thread_view(run)
    view["subruns"] = [(sub.task, deep_view(sub)) for sub in run.subruns]
    return view


def deep_differences(a: dict, b: dict, where: str = "run") -> list[str]:
    """The keys of two `deep_view`s that differ, named by where (`run/1:0:sub/...`)."""
    found = [f"{where}:{key}" for key in differences(a, b) if key != "subruns"]
    if [task for task, _ in a["subruns"]] != [task for task, _ in b["subruns"]]:
        return [*found, f"{where}:subruns"]
    for (task, sub_a), (_, sub_b) in zip(a["subruns"], b["subruns"], strict=True):
        found.extend(deep_differences(sub_a, sub_b, f"{where}/{task}"))
    return found
