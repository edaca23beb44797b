"""What the notebooks import is installed by the two ways of opening them: `bash dev.sh lab`
and Binder (`binder/requirements.txt`). A notebook that imports a package neither installs
fails on a fresh machine, while CI (which installs the test extra) would still pass."""

import ast
import importlib.metadata as metadata
import json
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def notebook_imports() -> dict[str, set[str]]:
    """Top-level module -> the notebooks importing it (third-party only)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            source = "\n".join(
                ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))
            )
            for node in ast.walk(ast.parse(source)):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top != "nbgraph":
                        found.setdefault(top, set()).add(path.name)
    return found


def closure(requirements: list[str], extras: set[str]) -> set[str]:
    """Distribution names installed by this project with `extras` (read from pyproject.toml),
    and by `requirements`, with what they depend on."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"]) + list(requirements)
    for extra in extras:
        specs += project["optional-dependencies"].get(extra, [])
    wanted = [Requirement(r) for r in specs]
    seen: set[str] = set()
    while wanted:
        req = wanted.pop()
        name = req.name.lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        for spec in requires:
            sub = Requirement(spec)
            if sub.marker is None or sub.marker.evaluate({"extra": ""}):
                wanted.append(sub)
    return seen


def distributions_of(module: str) -> set[str]:
    return {d.lower().replace("_", "-") for d in metadata.packages_distributions().get(module, [])}


def check(extras: set[str], where: str) -> None:
    installed = closure([], extras)
    missing = {
        module: sorted(books)
        for module, books in notebook_imports().items()
        if not distributions_of(module) & installed
    }
    assert not missing, f"{where} does not install what these notebooks import: {missing}"


def test_dev_sh_lab_installs_what_the_notebooks_import():
    match = re.search(
        r"lab\)\n(?:.*\n)*?\s*setup_python\s+\"?([\w,]+)\"?", (ROOT / "dev.sh").read_text()
    )
    assert match, "dev.sh lab should call setup_python with the extras"
    check(set(match.group(1).split(",")), "bash dev.sh lab")


def test_binder_installs_what_the_notebooks_import():
    lines = (ROOT / "binder" / "requirements.txt").read_text().split()
    extras = {
        e
        for ln in lines
        if (m := re.fullmatch(r"\.\[([^\]]*)\]", ln))
        for e in m.group(1).split(",")
    }
    assert extras, "binder/requirements.txt should install this repository with extras"
    check(extras, "binder/requirements.txt")
