"""The Binder configuration (binder/): repo2docker installs nbgraph with the lab extra, graphviz
and Python 3.11, and pyproject.toml still offers what binder/ asks for."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def lines(name: str) -> list[str]:
    """The non-blank, non-comment lines of a binder/ file."""
    text = (BINDER / name).read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_binder_is_the_only_config_folder() -> None:
    # repo2docker reads binder/ or .binder/; with both, which one wins is easy to get wrong
    assert BINDER.is_dir()
    assert not (ROOT / ".binder").exists()
    # environment.yml would take precedence over requirements.txt and skip the repo install
    assert not (BINDER / "environment.yml").exists()


def test_requirements_install_this_repo_with_the_lab_extra() -> None:
    # binder/ switches off repo2docker's automatic install: the repo must be listed
    local = [re.fullmatch(r"(?:-e\s+)?\.\[([^\]]*)\]", ln) for ln in lines("requirements.txt")]
    extras = [{e.strip() for e in match.group(1).split(",")} for match in local if match]
    assert extras, f"binder/requirements.txt installs no .[extras]: {lines('requirements.txt')}"
    assert "lab" in extras[0]


def test_the_lab_extra_exists_and_brings_jupyterlab() -> None:
    extras = pyproject()["project"]["optional-dependencies"]
    assert "lab" in extras
    names = {Requirement(spec).name.lower() for spec in extras["lab"]}
    assert "jupyterlab" in names


def test_apt_installs_graphviz() -> None:
    assert "graphviz" in lines("apt.txt")


def test_runtime_is_python_3_11_and_the_package_admits_it() -> None:
    assert lines("runtime.txt") == ["python-3.11"]
    requires = SpecifierSet(pyproject()["project"]["requires-python"])
    assert requires.contains("3.11")


def test_the_readme_badge_opens_this_repository_on_binder() -> None:
    repository = pyproject()["project"]["urls"]["Repository"]
    owner_repo = repository.removeprefix("https://github.com/")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pattern = r"https://mybinder\.org/v2/gh/([^/]+/[^/]+)/HEAD\?urlpath=lab/tree/([^)\s]+)\)"
    links = re.findall(pattern, readme)
    assert links, "the README has no Binder link"
    assert "mybinder.org/badge_logo.svg" in readme
    for found, folder in links:
        assert found == owner_repo
        assert (ROOT / folder).is_dir()
