"""Blocking work handed to a worker thread, with every exception it raises coming back.

``asyncio.to_thread`` (and ``loop.run_in_executor``) hand a function's exception to an asyncio
future, which refuses ``StopIteration``: the refusal is logged on the event loop and the awaiting
request never resumes. A ``next()`` that found nothing deep inside a use case would then hang its
request forever instead of answering 500. Every hand-off of the service goes through here, where
``StopIteration`` comes back as a ``RuntimeError`` raised from it (as a coroutine reports one).
Starlette's ``run_in_threadpool`` (anyio) already does that.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import Executor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def stop_iteration_raised(func: Callable[P, R]) -> Callable[P, R]:
    """``func``, raising a RuntimeError from any StopIteration it lets out."""

    @functools.wraps(func)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except StopIteration as exc:
            name = getattr(func, "__qualname__", None) or repr(func)  # a partial has no name
            raise RuntimeError(f"{name} raised StopIteration") from exc

    return call


async def to_thread(func: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """``asyncio.to_thread`` (the caller's context variables included) whose every exception
    reaches the caller."""
    return await asyncio.to_thread(stop_iteration_raised(func), *args, **kwargs)


async def in_executor(executor: Executor, func: Callable[..., R], /, *args: object) -> R:
    """``loop.run_in_executor`` on ``executor``, whose every exception reaches the caller."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, stop_iteration_raised(func), *args)
