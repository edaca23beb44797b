"""`nbgraph.func`'s own checks: what it refuses, and how, by name."""

import pytest

from nbgraph import GraphBuildError
from nbgraph.func import entrypoint, task


def test_a_retry_policy_that_is_not_one_is_refused_naming_the_task():
    with pytest.raises(GraphBuildError, match="Task 'double': retry_policy= must be a RetryPolicy"):

        @task(retry_policy="twice")
        def double(x: int) -> int:
            return 2 * x


def test_an_async_task_called_from_a_sync_entrypoint_names_the_task():
    @task
    async def fetch(x: int) -> int:
        return x

    @entrypoint()
    def main(x: int) -> int:
        return fetch(x).result()

    with pytest.raises(TypeError, match="Task 'fetch' is async"):
        main.invoke(1)


def test_a_task_keeps_its_name_and_function():
    @task(name="twice")
    def double(x: int) -> int:
        """Double it."""
        return 2 * x

    assert (double.name, double.__doc__, double.func(2)) == ("twice", "Double it.", 4)
    assert repr(double) == "<task 'twice'>"


def test_entrypoint_refuses_an_unknown_option():
    with pytest.raises(TypeError, match="unexpected arguments \\['checkpoint'\\]"):
        entrypoint(checkpoint=None)
