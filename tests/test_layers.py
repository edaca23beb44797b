"""The package's shape: every module imports only from its own layer or below.

The layers are drawn in docs/ARCHITECTURE.md.

Imports are read with `ast`, at top level and inside functions alike, so a "lazy" import that
runs upward fails here too.
"""

from __future__ import annotations

import ast
import difflib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nbgraph"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("basics", ("nbgraph.primitives", "nbgraph.errors", "nbgraph.policies", "nbgraph.warnings")),
    ("state", ("nbgraph.messages", "nbgraph.reducers", "nbgraph.schema", "nbgraph.isolation")),
    ("codec", ("nbgraph.codec",)),
    ("graph", ("nbgraph.blueprint",)),
    ("storage", ("nbgraph.checkpoint", "nbgraph.store")),
    ("engine", ("nbgraph.engine",)),
    ("record", ("nbgraph.record",)),
    ("views", ("nbgraph.views",)),
    ("notebook", ("nbgraph.notebook", "nbgraph")),
    (
        "mirror",
        (
            "nbgraph.types",
            "nbgraph.graph",
            "nbgraph.config",
            "nbgraph.runtime",
            "nbgraph.constants",
            "nbgraph.managed",
            "nbgraph.cache",
            "nbgraph.typing",
        ),
    ),
]
"""Bottom up. A module belongs to the layer of its longest matching dotted prefix."""

ENGINE_FLOORS: list[tuple[str, ...]] = [
    ("nbgraph.engine.core",),
    ("nbgraph.engine.node_api",),
    ("nbgraph.engine.lineages",),
    ("nbgraph.engine.persistence",),
    ("nbgraph.engine.nested", "nbgraph.engine.streaming", "nbgraph.engine.branches"),
]
"""The engine's sub-packages, bottom up: the core (one run, its tasks, its writes) imports
none of the features built on it; the node API (`get_config`, `interrupt`, ...: what a node
calls, and what the public `nbgraph.config`, `.runtime`, `.types` import) on the core alone;
branch lineages as data sit on the core; persistence on
both; nested runs, streaming and the branch run loop on those, and not on each other. The
engine's own top modules (`app`, `drive`, `stepping`, `runnable`) compose them all."""

MAX_CLASS_LINES = 400

FACTS = "nbgraph.engine.facts"
"""The one engine module the record and the views import: a run's facts, and the engine
functions that read them again. The notebook layer may use the engine as it needs."""

FACTS_READERS = ("record", "views")
"""The layers that read a recorded run, and so reach the engine only through `FACTS`."""

MAX_FUNCTION_LINES = 60


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.with_suffix("").relative_to(package.parent).parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    best, best_length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    if best < 0:
        raise AssertionError(f"module {module} is in no layer; add it to LAYERS")
    return best


def _is_module(name: str, package: Path) -> bool:
    where = package.parent / Path(*name.split("."))
    return where.is_dir() or where.with_suffix(".py").exists()


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under `if TYPE_CHECKING:`: imports for annotations, never run."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(child) for part in node.body for child in ast.walk(part))
    return hidden


def imported_modules(
    path: Path, package: Path = PACKAGE, *, runtime_only: bool = False
) -> list[tuple[int, str]]:
    """(line, module) for every nbgraph module `path` imports, wherever the import is.

    With `runtime_only`, imports under `if TYPE_CHECKING:` are left out.
    """
    here = module_name(path, package)
    home = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    tree = ast.parse(path.read_text(), str(path))
    hidden = _type_checking_only(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = home.split(".")[: len(home.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "nbgraph" or target.startswith("nbgraph."):
                for alias in node.names:  # `from nbgraph.x import y` may name a module y
                    full = f"{target}.{alias.name}"
                    found.append((node.lineno, full if _is_module(full, package) else target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "nbgraph" or alias.name.startswith("nbgraph."):
                    found.append((node.lineno, alias.name))
    return found


def engine_floor(module: str) -> tuple[int, str]:
    """(floor, sub-package) of an engine module; the engine's top modules are above every
    floor, and a module outside the engine is (-1, "")."""
    if not module.startswith("nbgraph.engine"):
        return -1, ""
    for index, group in enumerate(ENGINE_FLOORS):
        for prefix in group:
            if module == prefix or module.startswith(prefix + "."):
                return index, prefix
    return len(ENGINE_FLOORS), "nbgraph.engine"


def engine_crossings(package: Path = PACKAGE) -> list[str]:
    """Every import inside the engine that runs up a floor or sideways between sibling
    sub-packages, as `file:line: who imports what`."""
    found = set()
    for path in sorted(package.rglob("*.py")):
        here = module_name(path, package)
        floor, home = engine_floor(here)
        if floor < 0 or floor == len(ENGINE_FLOORS):
            continue
        for line, target in imported_modules(path, package):
            their_floor, theirs = engine_floor(target)
            if their_floor < 0 or theirs == home:
                continue
            if their_floor >= floor:
                found.add(f"{path.relative_to(package.parent)}:{line}: {here} imports {target}")
    return sorted(found)


def spread_classes(package: Path = PACKAGE) -> list[str]:
    """Classes spread over files: a class whose base, defined in another module of the
    package, holds part of its state — a base without `__init__` whose methods touch `self`
    attributes they do not define (a mixin sharing its host's attributes). Stateless
    facades (methods calling the host's public methods) and exceptions are fine."""
    defined: dict[str, list[tuple[str, ast.ClassDef]]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, []).append((module_name(path, package), node))
    spread = []
    for name, places in sorted(defined.items()):
        for module, node in places:
            for base in node.bases:
                for base_module, base_node in defined.get(ast.unparse(base), ()):
                    if base_module != module and _shares_state(base_node):
                        spread.append(
                            f"{module}.{name} takes state from {base_module}.{base_node.name}"
                        )
    return spread


def _shares_state(node: ast.ClassDef) -> bool:
    if any(isinstance(x, ast.FunctionDef) and x.name == "__init__" for x in node.body):
        return False
    own = {x.name for x in node.body if isinstance(x, ast.FunctionDef | ast.AsyncFunctionDef)}
    own |= {
        t.id
        for x in node.body
        if isinstance(x, ast.Assign)
        for t in x.targets
        if isinstance(t, ast.Name)
    }
    own |= {
        x.target.id
        for x in node.body
        if isinstance(x, ast.AnnAssign) and isinstance(x.target, ast.Name)
    }
    called = set()  # (`self.name(...)`, or `self.name` handed to a call: a method used)
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            called.update(id(part) for part in (call.func, *call.args))
    for attr in ast.walk(node):
        if not (isinstance(attr, ast.Attribute) and isinstance(attr.value, ast.Name)):
            continue
        if attr.value.id != "self" or attr.attr in own:
            continue
        if id(attr) not in called or attr.attr.startswith("_"):
            return True
    return False


ONE_WRITER: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "RunLoop": ("nbgraph.engine.core.loop", ("run", "loop"), ("BranchLoop",)),
    "Schedule": ("nbgraph.engine.core.schedule", ("schedule",), ()),
}
"""The objects with one writer: class -> (the module that defines it, the names a reference
to one goes by (`run.x`, `self.loop.x`), its subclasses). Only the defining module assigns
their slots: anything else asks a method (`Schedule.restore`, `RunLoop.apply`) or hands the
run a hook when it is made (`RunLoop(..., hooks=)`).

A write is `<receiver>.<slot> = / += / del` outside that module. The receiver is known by
its name; a slot no other class of the package has is known by the slot's name alone, on any
receiver. `self` in a subclass (`BranchLoop`, `engine.branches.run`) is the subclass's own
object: its methods are the run's methods for that semantics (they override `RunLoop`'s)."""


def _slots(tree: ast.AST, name: str) -> set[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            for item in node.body:
                if isinstance(item, ast.Assign) and "__slots__" in map(ast.unparse, item.targets):
                    return set(ast.literal_eval(item.value)) - {"__weakref__"}
    raise AssertionError(f"{name} has no __slots__ (ONE_WRITER reads them)")


MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "popitem", "clear", "update", "setdefault", "add"}
    | {"remove", "discard"}
)
"""Methods that change a list, dict or set in place: `run.answers.setdefault(...)` writes
the run as much as `run.answers = ...` does."""


def _assigned(node: ast.AST, deep: bool = False) -> list[ast.Attribute]:
    """The attributes an assignment, augmented assignment or `del` writes; with `deep`,
    also those whose value one changes in place (`x.slot[k] = v`, `x.slot.append(v)`,
    `x.slot[i].add(v)`)."""
    if isinstance(node, ast.Assign | ast.Delete):
        targets = list(node.targets)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    elif deep and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        targets = [node.func.value] if node.func.attr in MUTATORS else []
    else:
        return []
    found: list[ast.Attribute] = []
    while targets:
        target, *targets = targets
        if isinstance(target, ast.Tuple | ast.List):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        elif isinstance(target, ast.Attribute):
            found.append(target)
        elif deep and isinstance(target, ast.Subscript):
            targets.append(target.value)
    return found


def _receiver_name(node: ast.expr) -> str | None:
    """`run` for `run.x`, `self.run.x` and `item.run.x`: the name a receiver goes by."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def outside_writers(package: Path = PACKAGE) -> list[str]:
    """Every assignment of a `ONE_WRITER` object's slot outside its own module, as
    `file:line: module writes Class.slot`."""
    trees = {module_name(p, package): (p, ast.parse(p.read_text())) for p in package.rglob("*.py")}
    others: set[str] = set()  # the fields of other classes: declared, or set on `self`
    for _, tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name not in ONE_WRITER:
                others.update(
                    item.target.id
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                )
                others.update(
                    target.attr
                    for child in ast.walk(node)
                    for target in _assigned(child)
                    if ast.unparse(target.value) == "self"
                )
    found = []
    for name, (home, receivers, subclasses) in ONE_WRITER.items():
        slots = _slots(trees[home][1], name)
        unique = slots - others
        for module, (path, tree) in sorted(trees.items()):
            if module == home:
                continue
            own = {
                id(child)
                for node in ast.walk(tree)
                if isinstance(node, ast.ClassDef) and node.name in subclasses
                for child in ast.walk(node)
            }
            for node in ast.walk(tree):
                for target in _assigned(node, deep=True):
                    if target.attr not in slots:
                        continue
                    receiver = _receiver_name(target.value)
                    if receiver == "self" and id(node) in own:
                        continue
                    if receiver in receivers or target.attr in unique:
                        where = f"{path.relative_to(package.parent)}:{node.lineno}"
                        found.append(f"{where}: {module} writes {name}.{target.attr}")
    return found


def reducer_guesses(package: Path = PACKAGE) -> list[str]:
    """Places outside `nbgraph/reducers.py` that guess what a reducer is from its function:
    a comparison (`is`, `in`, `==`) of a reducer's `fn` or `in_place` with anything but
    None, or a call of `plain_function` (the function a file's reducer wraps). A reducer
    says what it is (`Reducer.appends`, `extends_in_place`, `order_matters`)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if module_name(path, package) == "nbgraph.reducers":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            guess = None
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("plain_function"):
                guess = ast.unparse(node)
            elif isinstance(node, ast.Compare) and not any(
                isinstance(side, ast.Constant) and side.value is None
                for side in (node.left, *node.comparators)
            ):
                for side in (node.left, *node.comparators):
                    for part in ast.walk(side):
                        if (
                            isinstance(part, ast.Attribute)
                            and part.attr in ("fn", "in_place")
                            and "reducer" in ast.unparse(part.value).lower()
                        ):
                            guess = ast.unparse(node)
            if guess is not None:
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {guess}")
    return found


def upward_imports(package: Path = PACKAGE) -> list[str]:
    """Every import in `package` that runs upward, as `file:line: who (layer) imports what`."""
    upward = set()
    for path in sorted(package.rglob("*.py")):
        here = module_name(path, package)
        for line, target in imported_modules(path, package):
            if layer_of(target) > layer_of(here):
                upward.add(
                    f"{path.relative_to(package.parent)}:{line}: {here} "
                    f"({LAYERS[layer_of(here)][0]}) imports {target} "
                    f"({LAYERS[layer_of(target)][0]})"
                )
    return sorted(upward)


def engine_imports_past_facts(package: Path = PACKAGE) -> list[str]:
    """Every import, in the record or the views (`FACTS_READERS`), of an engine module other
    than `FACTS`, as `file:line: who imports what`."""
    found = set()
    for layer in FACTS_READERS:
        for path in sorted((package / layer).rglob("*.py")):
            here = module_name(path, package)
            for line, target in imported_modules(path, package):
                if LAYERS[layer_of(target)][0] == "engine" and target != FACTS:
                    found.add(
                        f"{path.relative_to(package.parent)}:{line}: {here} imports {target}; "
                        f"the {layer} layer imports the engine only through {FACTS}"
                    )
    return sorted(found)


def modules_in_cycles(package: Path = PACKAGE) -> list[list[str]]:
    """The import graph's cycles: each strongly connected set of two or more modules.

    An import of a package counts as an import of its `__init__`; imports inside functions
    count too, those for annotations only (`if TYPE_CHECKING:`) do not, as they never run
    (Tarjan's algorithm, iterative). Cycles inside one layer are allowed; the layer rule
    forbids any across layers.
    """
    modules = {module_name(p, package): p for p in package.rglob("*.py")}
    edges = {
        name: sorted(
            {t for _, t in imported_modules(path, package, runtime_only=True) if t in modules}
            - {name}
        )
        for name, path in modules.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        cycles.append(sorted(members))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return cycles


MODULES = sorted(PACKAGE.rglob("*.py"))

ALLOWED_CYCLES = [
    [
        "nbgraph.engine.streaming.chat_stream",
        "nbgraph.engine.streaming.namespaces",
        "nbgraph.engine.streaming.streams",
    ]
]
"""The one import cycle left: a live stream's sink, its namespaces and its chat events call
each other while a run streams. Every other dependency runs one way."""


def test_imports_run_one_way_but_in_streaming():
    assert modules_in_cycles() == ALLOWED_CYCLES, (
        "a new import cycle: move the shared piece down into a module both use, or hand the "
        "lower module what it needs as an argument (an import inside a function counts too)"
    )


def test_no_module_imports_from_a_layer_above_its_own():
    upward = upward_imports()
    assert not upward, "imports that run upward:\n" + "\n".join(upward)


def test_the_engine_core_imports_none_of_the_features_built_on_it():
    crossings = engine_crossings()
    assert not crossings, "engine imports that cross its floors:\n" + "\n".join(crossings)


def test_no_class_is_spread_over_files():
    spread = spread_classes()
    assert not spread, "classes whose state lives in another file:\n" + "\n".join(spread)


def test_the_engine_and_class_rules_find_what_they_forbid(tmp_path):
    package = tmp_path / "nbgraph"
    for name, source in {
        "__init__.py": "",
        "engine/__init__.py": "",
        "engine/core/__init__.py": "",
        "engine/core/loop.py": "from nbgraph.engine.streaming import live\n",
        "engine/core/parts.py": "class Part:\n    def go(self):\n        return self.values\n",
        "engine/core/facade.py": "class Habits:\n    def batch(self, xs):\n"
        "        return [self.invoke(x) for x in xs]\n",
        "engine/core/whole.py": "from nbgraph.engine.core.parts import Part\n"
        "from nbgraph.engine.core.facade import Habits\n"
        "class Whole(Part, Habits):\n    def __init__(self):\n        self.values = 1\n",
        "engine/streaming/__init__.py": "",
        "engine/streaming/live.py": "from nbgraph.engine.core import loop\n",
        "engine/nested/__init__.py": "",
        "engine/nested/runs.py": "from nbgraph.engine.streaming import live\n",
        "engine/app.py": "from nbgraph.engine.nested import runs\n",
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    assert engine_crossings(package) == [
        "nbgraph/engine/core/loop.py:1: nbgraph.engine.core.loop imports "
        "nbgraph.engine.streaming.live",
        "nbgraph/engine/nested/runs.py:1: nbgraph.engine.nested.runs imports "
        "nbgraph.engine.streaming.live",
    ]
    assert spread_classes(package) == [
        "nbgraph.engine.core.whole.Whole takes state from nbgraph.engine.core.parts.Part"
    ]


def test_only_its_own_module_writes_a_run_or_its_schedule():
    found = outside_writers()
    assert not found, (
        "RunLoop and Schedule have one writer, their own class: hand the run a value it "
        "applies (`RunLoop.start`), a hook (`RunLoop.hook`), or call a method named for what "
        "it means (`Schedule.drop_due`) instead of:\n" + "\n".join(found)
    )


def test_the_one_writer_rule_finds_outside_writes(tmp_path):
    package = tmp_path / "nbgraph"
    for name, source in {
        "__init__.py": "",
        "engine/__init__.py": "",
        "engine/core/__init__.py": "",
        "engine/core/loop.py": "class RunLoop:\n    __slots__ = ('step', 'values', 'paused_at')\n"
        "    def go(self):\n        self.step = 1\n",
        "engine/core/schedule.py": "class Schedule:\n    __slots__ = ('pull', 'seen')\n",
        "engine/core/other.py": "class Log:\n    def __init__(self):\n        self.values = {}\n"
        "        self.seen = set()\n"
        "def start(run, item, log, point):\n    run.step = 0\n    item.run.values = {}\n"
        "    del item.loop.step\n    point.paused_at += 1\n    log.values = {}\n"
        "    run.schedule.seen = []\n    run.schedule.pull, x = {}, 1\n"
        "    run.schedule.seen[0].add('a')\n    loop.values['k'] = 1\n"
        "    run.values.setdefault('k', []).append(2)\n    log.values.clear()\n",
        "engine/branches.py": "from nbgraph.engine.core.loop import RunLoop\n"
        "class BranchLoop(RunLoop):\n    def go(self):\n        self.step = 2\n",
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    assert sorted(outside_writers(package)) == [
        f"nbgraph/engine/core/other.py:{line}: nbgraph.engine.core.other writes {what}"
        for line, what in [
            (11, "Schedule.seen"),
            (12, "Schedule.pull"),
            (13, "Schedule.seen"),  # (changed in place: `add`, `x[k] = v`, `setdefault`)
            (14, "RunLoop.values"),
            (15, "RunLoop.values"),
            (6, "RunLoop.step"),
            (7, "RunLoop.values"),
            (8, "RunLoop.step"),
            (9, "RunLoop.paused_at"),  # (a slot no other class has: any receiver)
        ]
    ]  # (not `log.values`, another class's field; not BranchLoop's own `self.step`; the
    # `.append` on what `setdefault` returned is the same write, counted once)


def test_no_reducer_property_is_guessed_outside_the_reducers_module():
    found = reducer_guesses()
    assert not found, "ask the reducer (Reducer.appends, order_matters):\n" + "\n".join(found)


def test_the_reducer_rule_finds_a_guess(tmp_path):
    package = tmp_path / "nbgraph"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "reducers.py").write_text("def plain_function(fn):\n    return fn\n")
    (package / "guess.py").write_text(
        "import operator\nfrom nbgraph.reducers import plain_function\n"
        "def appends(spec):\n    return spec.reducer.fn is operator.add\n"
        "def known(reducer):\n    return plain_function(reducer.fn)\n"
        "def has(spec):\n    return spec.reducer.in_place is not None\n"
    )
    assert reducer_guesses(package) == [
        "nbgraph/guess.py:4: spec.reducer.fn is operator.add",
        "nbgraph/guess.py:6: plain_function(reducer.fn)",
    ]


def test_the_layer_test_finds_an_upward_import_inside_a_function(tmp_path):
    package = tmp_path / "nbgraph"
    for name, source in {
        "__init__.py": "",
        "engine/__init__.py": "",
        "engine/probe.py": "def f():\n    from nbgraph.views import dot\n    return dot\n",
        "engine/fine.py": "from nbgraph.primitives import END\nfrom . import probe\n",
        "engine/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from nbgraph.views import dot\n",
        "views/__init__.py": "",
        "views/dot.py": "from nbgraph.engine import fine\n",
        "primitives.py": "END = 1\n",
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    views = "nbgraph.views.dot (views)"
    assert upward_imports(package) == [
        f"nbgraph/engine/probe.py:2: nbgraph.engine.probe (engine) imports {views}",
        f"nbgraph/engine/typed.py:3: nbgraph.engine.typed (engine) imports {views}",
    ]
    assert modules_in_cycles(package) == [
        ["nbgraph.engine.fine", "nbgraph.engine.probe", "nbgraph.views.dot"]
    ]


def test_the_record_and_the_views_import_the_engine_only_through_its_facts():
    found = engine_imports_past_facts()
    assert not found, "record and views imports of engine internals:\n" + "\n".join(found)


def test_the_facts_rule_finds_engine_imports_past_the_facts(tmp_path):
    package = tmp_path / "nbgraph"
    for name, source in {
        "__init__.py": "",
        "engine/__init__.py": "",
        "engine/facts.py": "from nbgraph.engine.core.runlog import RunLog\n",
        "engine/core/__init__.py": "",
        "engine/core/runlog.py": "RunLog = object\n",
        "record/__init__.py": "",
        "record/fine.py": "from nbgraph.engine.facts import RunLog\n"
        "from nbgraph.engine import facts\n",
        "record/probe.py": "def f():\n    from nbgraph.engine.core.runlog import RunLog\n",
        "record/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    import nbgraph.engine.core.runlog\n",
        "record/whole.py": "from nbgraph import engine\n",
        "views/__init__.py": "",
        "views/fine.py": "from nbgraph.engine.facts import RunLog\n",
        "views/dot.py": "def f():\n    from nbgraph.engine.core.runlog import RunLog\n",
        "notebook/__init__.py": "",
        "notebook/app.py": "from nbgraph.engine.core.runlog import RunLog\n",  # (it may)
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    runlog = "nbgraph.engine.core.runlog; the record layer imports the engine only through "
    engine = "nbgraph.engine; the record layer imports the engine only through "
    views = "nbgraph.engine.core.runlog; the views layer imports the engine only through "
    assert engine_imports_past_facts(package) == [
        f"nbgraph/record/probe.py:2: nbgraph.record.probe imports {runlog}nbgraph.engine.facts",
        f"nbgraph/record/typed.py:3: nbgraph.record.typed imports {runlog}nbgraph.engine.facts",
        f"nbgraph/record/whole.py:1: nbgraph.record.whole imports {engine}nbgraph.engine.facts",
        f"nbgraph/views/dot.py:2: nbgraph.views.dot imports {views}nbgraph.engine.facts",
    ]
    assert upward_imports(package) == []


ARCHITECTURE = PACKAGE.parent / "docs" / "ARCHITECTURE.md"

MAX_SUMMARY = 200
"""A module's docstring opens with one sentence of at most this many characters: what the
module is, its line in the doc's module list. The rest of the docstring says the rest."""

_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\.\.)\.(?=\s+[A-Z`(\"'*])|\.$")


def summary(path: Path) -> str:
    """A module's one line: its docstring's first sentence (up to a full stop that a new
    sentence follows, or the end of the first paragraph), on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    paragraph = " ".join(doc.split("\n\n")[0].split())
    end = _SENTENCE_END.search(paragraph)
    return paragraph[: end.end()] if end else paragraph


def _shown(module: str, package: Path = PACKAGE) -> str:
    """`nbgraph/views/dot.py` for `nbgraph.views.dot` (a package: its `__init__.py`)."""
    where = package.parent / Path(*module.split("."))
    path = where / "__init__.py" if where.is_dir() else where.with_suffix(".py")
    return str(path.relative_to(package.parent))


def _floor_heading(floor: int) -> str:
    if floor == len(ENGINE_FLOORS):
        return "#### top: the engine's own modules"
    places = ", ".join(
        f"`{_shown(p)[len('nbgraph/') :].removesuffix('__init__.py')}`"
        for p in ENGINE_FLOORS[floor]
    )
    return f"#### floor {floor + 1}: {places}"


def module_list(package: Path = PACKAGE) -> str:
    """The doc's module list: each layer (the engine by its floors), each module in it with
    its docstring's first sentence, as `python tests/test_layers.py --modules` prints it."""
    groups: dict[tuple[int, int], list[tuple[str, Path]]] = {}
    for path in package.rglob("*.py"):
        name = module_name(path, package)
        layer = layer_of(name)
        floor = engine_floor(name)[0] if LAYERS[layer][0] == "engine" else -1
        groups.setdefault((layer, floor), []).append((name, path))
    lines: list[str] = []
    for layer, floor in sorted(groups):
        if f"### {layer + 1} {LAYERS[layer][0]}" not in lines:
            lines += [f"### {layer + 1} {LAYERS[layer][0]}", ""]
        if floor >= 0:
            lines += [_floor_heading(floor), ""]
        for _, path in sorted(groups[layer, floor]):
            lines.append(f"- `{path.relative_to(package.parent)}` — {summary(path)}")
        lines.append("")
    return "\n".join(lines).strip() + "\n"


def cycles_text(package: Path = PACKAGE) -> str:
    """The doc's account of the import cycles, as `python tests/test_layers.py` finds them."""
    cycles = modules_in_cycles(package)
    if not cycles:
        return "`python tests/test_layers.py` finds no import cycle.\n"
    count = sum(map(len, cycles))
    lines = [
        f"`python tests/test_layers.py` finds {len(cycles)} import "
        f"{'cycle' if len(cycles) == 1 else 'cycles'} ({count} modules), each inside one layer:",
        "",
    ]
    for cycle in sorted(cycles, key=lambda c: (layer_of(c[0]), c)):
        shown = " ↔ ".join(f"`{_shown(m, package)[len('nbgraph/') :]}`" for m in cycle)
        lines.append(f"- {LAYERS[layer_of(cycle[0])][0]}: {shown}")
    return "\n".join(lines) + "\n"


def generated(package: Path = PACKAGE) -> dict[str, str]:
    """The doc's sections made from the code, by the name their markers carry."""
    return {"module list": module_list(package), "import cycles": cycles_text(package)}


_HINTS = {
    "module list": "edit the docstrings, not these lines",
    "import cycles": "change the imports, not these lines",
}


def _markers(name: str) -> tuple[str, str]:
    return (
        f"<!-- {name}: written by `python tests/test_layers.py --write`; {_HINTS[name]} -->",
        f"<!-- end of {name} -->",
    )


def doc_section(doc: str, name: str) -> str:
    """The text between a generated section's markers in the doc."""
    begin, end = _markers(name)
    if begin not in doc or end not in doc:
        raise AssertionError(f"docs/ARCHITECTURE.md has no markers for its {name}: {begin}")
    return doc.split(begin, 1)[1].split(end, 1)[0].strip("\n") + "\n"


def with_sections(doc: str, sections: dict[str, str]) -> str:
    """The doc with each generated section's text put between its markers."""
    for name, text in sections.items():
        begin, end = _markers(name)
        doc_section(doc, name)  # (the markers are there)
        head, rest = doc.split(begin, 1)
        doc = f"{head}{begin}\n\n{text}\n{end}{rest.split(end, 1)[1]}"
    return doc


def test_the_architecture_doc_lists_the_modules_and_cycles_the_code_has():
    doc = ARCHITECTURE.read_text()
    stale = []
    for name, text in generated().items():
        if doc_section(doc, name) != text:
            diff = difflib.unified_diff(
                doc_section(doc, name).splitlines(),
                text.splitlines(),
                "doc",
                "code",
                lineterm="",
                n=0,
            )
            stale.append(f"{name}:\n" + "\n".join(list(diff)[2:40]))
    assert not stale, (
        "docs/ARCHITECTURE.md differs from the code; run `python tests/test_layers.py --write` "
        "(it rewrites these sections from the modules' docstrings and imports):\n"
        + "\n".join(stale)
    )


def test_every_module_says_what_it_is_in_one_short_sentence():
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}: "
        + (f"{len(line)} characters" if line else "no docstring")
        for path in MODULES
        if not (line := summary(path)) or len(line) > MAX_SUMMARY
    ]
    assert not wrong, (
        f"a module's docstring opens with one sentence of at most {MAX_SUMMARY} characters "
        "(its line in docs/ARCHITECTURE.md):\n" + "\n".join(wrong)
    )


_UNIT = r"(?:µs|ns|ms|s|seconds?|minutes?|[kKMG]B)\b"
MEASURED = re.compile(
    r"(?<![\w.])\d[\d,.]*\s*"
    + _UNIT  # 2.5 µs, 1.13 MB
    + r"|(?<![\w.])\d+(?:\.\d+)?\s*×(?!\s*\d)"  # 6.2× (not a 2×2 frame)
    + r"|\b(?:twice|\w+ times) as (?:fast|slow)"
    + r"|\ba (?:half|third|quarter|fifth|tenth) of [^.]{0,40}\btime\b"
)
"""A measured time, size or ratio in a docstring: it goes stale there unseen."""

SPECIFIED = ("a random 0-1 s", "every 50 ms", "every 350 ms", "interval is 700 ms", "10 MB")
"""Numbers with units that docstrings give as what the code does (an interval it keeps, a
size in an example), not as what it was measured to cost."""

_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|^\s*>>> .*(?:\n(?!\s*$).*)*", re.M)
"""Quoted text and doctests (a `>>>` line and the lines after it up to a blank one)."""


def measured_in_docstrings(package: Path = PACKAGE) -> list[str]:
    """Measured times, sizes and ratios in the package's docstrings (of modules, classes,
    functions and attributes), as `file:line: what`. Quoted and doctest text is left out."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            body = getattr(node, "body", None)
            for item in body if isinstance(body, list) else ():
                if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)):
                    continue
                if not isinstance(text := item.value.value, str):
                    continue
                text = " ".join(_QUOTED.sub("", text).split())
                for phrase in SPECIFIED:
                    text = text.replace(phrase, "")
                found.extend(
                    f"{path.relative_to(package.parent)}:{item.lineno}: {match.group(0)}"
                    for match in MEASURED.finditer(text)
                )
    return found


def test_no_docstring_holds_a_measured_time():
    found = measured_in_docstrings()
    assert not found, (
        "measured numbers go stale in docstrings: put them in benchmarks/README.md "
        '("Timings behind the code", naming the module) and let the docstring say only which '
        "way the choice went (a number that is the code's behaviour goes in SPECIFIED):\n"
        + "\n".join(found)
    )


def test_the_timing_rule_finds_measured_numbers(tmp_path):
    package = tmp_path / "nbgraph"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""Fast (~2.5 µs a call).\n\n>>> 3 * 2.0  # 6.0 s\n"""\n'
        "X = 1\n"
        '"""The limit: 20 x 20 takes 7 s; `"0.12 ms"` is how a time shows."""\n'
        "def f():\n"
        '    """4.7–6.2× the JSON file, a fifth of a dataclass\'s time, twice as fast;\n'
        '    a DataFrame 2×2; a random 0-1 s wait."""\n'
    )
    assert measured_in_docstrings(package) == [
        "nbgraph/__init__.py:1: 2.5 µs",
        "nbgraph/__init__.py:6: 7 s",
        "nbgraph/__init__.py:8: 6.2×",
        "nbgraph/__init__.py:8: a fifth of a dataclass's time",
        "nbgraph/__init__.py:8: twice as fast",
    ]


def test_the_generated_sections_replace_only_their_own_text(tmp_path):
    package = tmp_path / "nbgraph"
    for name, source in {
        "__init__.py": '"""The names."""\n',
        "errors.py": '"""Errors, e.g. one. More here."""\nfrom nbgraph import primitives\n',
        "primitives.py": '"""Value types.\n\nMore."""\nfrom nbgraph import errors\n',
        "engine/__init__.py": '"""The engine."""\n',
        "engine/core/__init__.py": '"""The core: one run."""\n',
        "engine/app.py": '"""`App`: a graph\nthat runs. Details."""\n',
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    sections = generated(package)
    assert sections["module list"] == (
        "### 1 basics\n\n"
        "- `nbgraph/errors.py` — Errors, e.g. one.\n"
        "- `nbgraph/primitives.py` — Value types.\n\n"
        "### 6 engine\n\n"
        "#### floor 1: `engine/core/`\n\n"
        "- `nbgraph/engine/core/__init__.py` — The core: one run.\n\n"
        "#### top: the engine's own modules\n\n"
        "- `nbgraph/engine/__init__.py` — The engine.\n"
        "- `nbgraph/engine/app.py` — `App`: a graph that runs.\n\n"
        "### 9 notebook\n\n"
        "- `nbgraph/__init__.py` — The names.\n"
    )
    assert sections["import cycles"] == (
        "`python tests/test_layers.py` finds 1 import cycle (2 modules), each inside one layer:"
        "\n\n- basics: `errors.py` ↔ `primitives.py`\n"
    )
    begin, end = _markers("module list")
    doc = f"# Doc\n\n{begin}\nold\n{end}\n\nafter\n" + "\n".join(_markers("import cycles"))
    written = with_sections(doc, sections)
    assert written.startswith(f"# Doc\n\n{begin}\n\n### 1 basics\n")
    assert f"\n\n{end}\n\nafter\n" in written and "old" not in written
    assert with_sections(written, sections) == written
    assert doc_section(written, "import cycles") == sections["import cycles"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_classes_and_functions_stay_readable(path: Path):
    """A class past the cap holds two ideas: make it smaller (compose it of objects that own
    their part), not longer over several files (`test_no_class_is_spread_over_files`)."""
    for node in ast.walk(ast.parse(path.read_text())):
        length = (getattr(node, "end_lineno", 0) or 0) - getattr(node, "lineno", 0) + 1
        if isinstance(node, ast.ClassDef):
            assert length <= MAX_CLASS_LINES, f"class {node.name}: {length} lines"
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert length <= MAX_FUNCTION_LINES * 1.1, f"{node.name}: {length} lines"


def modules_importing_tests(tests: Path) -> list[str]:
    """Test modules that import another test module (they share through `tests/support/`
    and conftest fixtures instead), as `file:line: imports module`."""
    found = []
    for path in sorted(tests.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.rsplit(".", 1)[-1].startswith("test_"):
                    found.append(f"{path.relative_to(tests.parent)}:{node.lineno}: imports {name}")
    return found


def test_no_test_module_imports_another(tmp_path):
    assert modules_importing_tests(PACKAGE.parent / "tests") == []
    (tmp_path / "tests" / "views").mkdir(parents=True)
    (tmp_path / "tests" / "views" / "test_a.py").write_text("from tests.views.test_b import x\n")
    (tmp_path / "tests" / "views" / "test_b.py").write_text("from tests.support import harness\n")
    assert modules_importing_tests(tmp_path / "tests") == [
        "tests/views/test_a.py:1: imports tests.views.test_b"
    ]


def _main(arguments: list[str]) -> None:
    """python tests/test_layers.py [--modules] [--write] [nbgraph/]: the import graph of a
    checkout (upward imports, floor crossings, spread classes, cycles); with `--modules`,
    the doc's module list instead; with `--write`, docs/ARCHITECTURE.md's generated
    sections (the module list, the import cycles) rewritten from the code."""
    flags = {a for a in arguments if a.startswith("--")}
    paths = [a for a in arguments if not a.startswith("--")]
    if flags - {"--modules", "--write"}:
        raise SystemExit(
            f"unknown option {sorted(flags - {'--modules', '--write'})}: {_main.__doc__}"
        )
    root = Path(paths[0]).resolve() if paths else PACKAGE
    if "--write" in flags:
        ARCHITECTURE.write_text(with_sections(ARCHITECTURE.read_text(), generated(root)))
        print(f"wrote the module list and the import cycles into {ARCHITECTURE}")
    if "--modules" in flags:
        print(module_list(root), end="")
    if flags:
        return
    found, cycles = upward_imports(root), modules_in_cycles(root)
    print("\n".join(found))
    print(f"{len(found)} upward imports in {len(list(root.rglob('*.py')))} modules")
    crossings, spread = engine_crossings(root), spread_classes(root)
    print("\n".join([*crossings, *spread]))
    print(f"{len(crossings)} engine floor crossings, {len(spread)} classes spread over files")
    past = engine_imports_past_facts(root)
    print("\n".join(past))
    print(f"{len(past)} record and views imports of the engine past {FACTS}")
    for cycle in cycles:
        print(f"cycle of {len(cycle)}: {', '.join(cycle)}")
    print(f"{sum(map(len, cycles))} modules in {len(cycles)} cycles")


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])
