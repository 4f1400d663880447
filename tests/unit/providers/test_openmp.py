"""The local engine's OpenMP settings: two threads, or half the cores of a bigger machine, a
brief spin, and an explicit setting in the environment always wins (it is read once, when the
engine's library loads)."""

from __future__ import annotations

import os

import pytest

from app.providers import openmp


@pytest.mark.parametrize(
    ("cores", "threads"), [(1, 1), (2, 2), (3, 2), (4, 2), (5, 2), (6, 3), (16, 8)]
)
def test_the_engine_takes_two_threads_or_half_the_cores(cores: int, threads: int) -> None:
    assert openmp.engine_threads(cores) == threads


def test_without_settings_the_engine_gets_its_share_of_the_usable_cores_and_a_brief_spin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3, 4, 5})
    openmp.configure_openmp()
    assert os.environ["OMP_NUM_THREADS"] == "3"
    assert os.environ["GOMP_SPINCOUNT"] == str(openmp.OPENMP_SPINS)


def test_an_explicit_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    openmp.configure_openmp()
    assert os.environ["OMP_NUM_THREADS"] == "7"
    assert "GOMP_SPINCOUNT" not in os.environ  # a wait policy given: its spinning is not changed
    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setenv("GOMP_SPINCOUNT", "5")
    openmp.configure_openmp()
    assert os.environ["GOMP_SPINCOUNT"] == "5"
