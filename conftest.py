"""Repository-wide test rule: each notebook must run top to bottom in under 60 seconds."""

import os
import time

import pytest

NOTEBOOK_SECONDS = float(os.environ.get("NBGRAPH_NOTEBOOK_SECONDS", "60"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    start = time.perf_counter()
    yield
    took = time.perf_counter() - start
    if item.nodeid.endswith(".ipynb") and took > NOTEBOOK_SECONDS:
        pytest.fail(
            f"{item.nodeid} took {took:.1f} s; a notebook must run in under "
            f"{NOTEBOOK_SECONDS:g} s on these machines."
        )
