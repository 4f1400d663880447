"""app/core/threads.py: results, exceptions and context variables come back from the thread."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.core.threads import in_executor, stop_iteration_raised, to_thread

REQUEST = contextvars.ContextVar("request", default="none")


def found_nothing() -> None:
    next(iter(()))


async def test_stop_iteration_comes_back_as_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="found_nothing raised StopIteration") as raised:
        await asyncio.wait_for(to_thread(found_nothing), timeout=10)
    assert type(raised.value.__cause__) is StopIteration


async def test_a_partial_that_raises_stop_iteration_is_named_by_its_repr() -> None:
    # functools.partial has no __qualname__: the error must still be the RuntimeError.
    with pytest.raises(
        RuntimeError, match=r"functools.partial\(.*found_nothing.*raised StopIteration"
    ):
        await asyncio.wait_for(to_thread(functools.partial(found_nothing)), timeout=10)


async def test_stop_iteration_from_an_executor_comes_back_as_runtime_error() -> None:
    with ThreadPoolExecutor(1) as pool, pytest.raises(RuntimeError, match="StopIteration"):
        await asyncio.wait_for(in_executor(pool, found_nothing), timeout=10)


async def test_results_other_exceptions_and_context_variables_pass_through() -> None:
    REQUEST.set("r-1")
    assert await to_thread(lambda a, b=0: (a, b, REQUEST.get()), 1, b=2) == (1, 2, "r-1")
    with ThreadPoolExecutor(1) as pool:
        assert await in_executor(pool, pow, 2, 5) == 32
    with pytest.raises(KeyError):
        await to_thread({}.__getitem__, "missing")


def test_the_wrapper_keeps_the_name_and_lets_values_through() -> None:
    wrapped = stop_iteration_raised(found_nothing)
    assert wrapped.__name__ == "found_nothing"
    assert stop_iteration_raised(len)([1, 2]) == 2
