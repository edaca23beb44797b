"""The docs site, built once for the tests that read it (tests/e2e/test_docs.py reads its
files, tests/e2e/test_browser_docsite.py opens it in Chromium)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory) -> Path:
    """The site's folder, built as `bash dev.sh docs` builds it: `mkdocs build --strict`
    (warnings, among them broken links and anchors, fail it), the notebooks executed, in a
    fresh folder (mkdocs-jupyter's cache of executed notebooks goes to the working
    directory: none is reused)."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    program = str(mkdocs) if mkdocs.exists() else shutil.which("mkdocs")
    assert program, "install the docs extra: pip install -e .[docs]"
    where = tmp_path_factory.mktemp("docs-site")
    done = subprocess.run(
        [program, "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(where / "site")],
        cwd=where,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return where / "site"
