"""The package's shape: every module imports only from its own layer or below.

The layers are drawn in docs/ARCHITECTURE.md.

Imports are read with `ast`, at top level and inside functions alike, so a "lazy" import that
runs upward fails here too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nbgraph"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("basics", ("nbgraph.types", "nbgraph.errors")),
    ("state", ("nbgraph.messages", "nbgraph.reducers", "nbgraph.schema")),
    ("codec", ("nbgraph.codec",)),
    ("graph", ("nbgraph.graph",)),
    ("engine", ("nbgraph.engine", "nbgraph.checkpoint")),
    ("record", ("nbgraph.record",)),
    ("views", ("nbgraph.views",)),
    ("notebook", ("nbgraph.notebook", "nbgraph")),
]
"""Bottom up. A module belongs to the layer of its longest matching dotted prefix."""

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def module_name(path: Path) -> str:
    parts = path.with_suffix("").relative_to(PACKAGE.parent).parts
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


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every nbgraph module `path` imports, wherever the import is."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "nbgraph" or target.startswith("nbgraph."):
                for alias in node.names:  # `from nbgraph.x import y` may name a module y
                    full = f"{target}.{alias.name}"
                    is_module = (PACKAGE.parent / Path(*full.split("."))).exists() or (
                        PACKAGE.parent / Path(*full.split("."))
                    ).with_suffix(".py").exists()
                    found.append((node.lineno, full if is_module else target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "nbgraph" or alias.name.startswith("nbgraph."):
                    found.append((node.lineno, alias.name))
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for path in MODULES:
        here = module_name(path)
        for line, target in imported_modules(path):
            if layer_of(target) > layer_of(here):
                upward.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: {here} "
                    f"({LAYERS[layer_of(here)][0]}) imports {target} "
                    f"({LAYERS[layer_of(target)][0]})"
                )
    assert not upward, "imports that run upward:\n" + "\n".join(sorted(set(upward)))


def test_the_layer_test_sees_an_upward_import(tmp_path):
    # the checker itself must catch a lazy import inside a function
    fake = PACKAGE / "engine" / "_layer_probe.py"
    assert not fake.exists()
    source = "def f():\n    from nbgraph.views import dot\n    return dot\n"
    tree = ast.parse(source)
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imports and layer_of(imports[0].module or "") > layer_of("nbgraph.engine.loop")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_modules_and_functions_stay_readable(path: Path):
    lines = path.read_text().splitlines()
    assert len(lines) <= MAX_MODULE_LINES * 1.1, f"{len(lines)} lines: split it along a seam"
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            assert length <= MAX_FUNCTION_LINES * 1.1, f"{node.name}: {length} lines"
