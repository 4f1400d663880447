"""bench/vector_shapes.py: the Gaussian fitted to a sample is the sample's, and its draws keep it."""

from __future__ import annotations

import numpy as np

from bench.vector_shapes import draw, fit


def _sample(rng: np.random.Generator) -> np.ndarray:
    # Anisotropic, off-centre: a shared direction and three directions of different spread.
    mean = np.zeros(8)
    mean[0] = 3.0
    spread = np.diag([0.0, 2.0, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    return mean + rng.standard_normal((20000, 8)) @ spread


def test_fit_keeps_the_sample_mean_and_covariance() -> None:
    sample = _sample(np.random.default_rng(1))
    shape = fit(sample)
    np.testing.assert_allclose(shape.mean, sample.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(shape.factor @ shape.factor.T, np.cov(sample.T), atol=1e-9)


def test_effective_dimensions_count_the_directions_that_vary() -> None:
    shape = fit(_sample(np.random.default_rng(2)))
    # eigenvalues 4, 1, 0.25: (5.25)² / (16 + 1 + 0.0625)
    assert abs(shape.effective_dimensions - 5.25**2 / 17.0625) < 0.05


def test_draws_are_unit_vectors_spread_like_the_sample_direction() -> None:
    sample = _sample(np.random.default_rng(3))
    drawn = draw(fit(sample), 20000, np.random.default_rng(4))
    assert drawn.shape == (20000, 8)
    assert drawn.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(drawn, axis=1), 1.0, atol=1e-5)
    unit = sample / np.linalg.norm(sample, axis=1, keepdims=True)
    np.testing.assert_allclose(drawn.mean(axis=0), unit.mean(axis=0), atol=0.02)
    # The directions that never vary in the sample do not vary in the draws either.
    assert np.abs(drawn[:, 4:]).max() < 1e-6
