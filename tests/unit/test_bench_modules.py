"""Every module of the bench package imports against the current app.

The benchmarks run only through ``python -m bench``, never in the test suite, so a refactor that
moves or renames what they import would otherwise go unnoticed until the next benchmark run.
Importing a module runs no benchmark: they start work only from ``run``/``main``.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import bench

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(bench.__path__, prefix=f"{bench.__name__}.")
)


def test_the_bench_package_has_modules() -> None:
    assert "bench.__main__" in MODULES
    assert "bench.retrieval" in MODULES
    assert "bench.peer.plot" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_bench_module_imports(name: str) -> None:
    importlib.import_module(name)
