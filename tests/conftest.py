"""Shared test switches: tests marked `dot` need the graphviz `dot` program; the support
modules' asserts (the harness's `same`) say what differed, as a test module's do."""

import os
import shutil

import pytest

pytest.register_assert_rewrite("tests.support")


def pytest_collection_modifyitems(config, items):
    if shutil.which("dot"):
        return
    for item in items:
        if "dot" not in item.keywords:
            continue
        if os.environ.get("CI"):
            # CI installs graphviz (dev.sh): a missing `dot` there fails, it is not skipped.
            item.add_marker(pytest.mark.usefixtures("_dot_required_in_ci"))
        else:
            item.add_marker(pytest.mark.skip(reason="the graphviz `dot` program is not installed"))


@pytest.fixture
def _dot_required_in_ci():
    pytest.fail("CI must have the graphviz `dot` program (bash dev.sh installs it).")
