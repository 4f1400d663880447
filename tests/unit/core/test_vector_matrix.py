"""VectorMatrix: exact cosine neighbours, kept in step with a partition's changes."""

from __future__ import annotations

import numpy as np
import pytest
import sqlite_vec
import threadpoolctl

from app.core.vector_matrix import VectorMatrix, best_cosines, cosines, float32_bytes

DIM = 16


def unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def brute_force(rows: dict[int, tuple[np.ndarray, int]], query, k, low=None, high=None):
    q = np.asarray(query, dtype=np.float32)
    q = q / np.linalg.norm(q)
    scored = [
        (1.0 - float(v @ q), row_id)
        for row_id, (v, tag) in rows.items()
        if (low is None or tag >= low) and (high is None or tag <= high)
    ]
    return [row_id for _, row_id in sorted(scored)[:k]]


@pytest.mark.parametrize("seed", range(8))
def test_random_changes_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    matrix, truth, change = VectorMatrix(DIM), {}, 0
    for _ in range(400):
        change += 1
        row_id = int(rng.integers(0, 150))
        if rng.random() < 0.25:
            matrix.apply([(row_id, None, 0, change)])
            truth.pop(row_id, None)
        else:
            vector, tag = unit(rng) * float(rng.uniform(0.5, 3)), int(rng.integers(0, 100))
            blob = vector.tobytes() if rng.random() < 0.5 else vector.tolist()
            matrix.apply([(row_id, blob, tag, change)])
            truth[row_id] = (vector / np.linalg.norm(vector), tag)
        if change % 20 == 0:
            query = unit(rng).tolist()
            for k in (1, 5, 10, 500):
                found = [n.row_id for n in matrix.nearest(query, k)]
                assert found == brute_force(truth, query, k)
            low, high = sorted(int(x) for x in rng.integers(0, 100, size=2))
            found = [n.row_id for n in matrix.nearest(query, 7, (low, high))]
            assert found == brute_force(truth, query, 7, low, high)
    assert len(matrix) == len(truth)
    assert matrix.last_change == change


def test_distance_is_one_minus_cosine_and_ties_go_to_the_lower_id() -> None:
    matrix = VectorMatrix(2)
    matrix.apply([(7, [1.0, 0.0], 0, 1), (3, [2.0, 0.0], 0, 2), (5, [0.0, 1.0], 0, 3)])
    found = matrix.nearest([1.0, 0.0], 3)
    assert [(n.row_id, round(n.distance, 6)) for n in found] == [(3, 0.0), (7, 0.0), (5, 1.0)]


def test_open_ended_tag_ranges() -> None:
    matrix = VectorMatrix(2)
    matrix.apply([(1, [1.0, 0.0], 10, 1), (2, [1.0, 0.1], 20, 2), (3, [1.0, 0.2], 30, 3)])
    assert [n.row_id for n in matrix.nearest([1.0, 0.0], 5, (20, None))] == [2, 3]
    assert [n.row_id for n in matrix.nearest([1.0, 0.0], 5, (None, 20))] == [1, 2]
    assert matrix.nearest([1.0, 0.0], 5, (31, None)) == []


def test_empty_matrix_zero_k_and_removing_unknown_rows() -> None:
    matrix = VectorMatrix(3)
    assert matrix.nearest([1.0, 0.0, 0.0], 5) == []
    matrix.apply([(1, None, 0, 4)])
    assert len(matrix) == 0 and matrix.last_change == 4
    matrix.apply([(1, [0.0, 0.0, 1.0], 0, 5)])
    assert matrix.nearest([1.0, 0.0, 0.0], 0) == []


def test_wrong_dimensions_are_refused() -> None:
    matrix = VectorMatrix(3)
    with pytest.raises(ValueError, match="expected 3 dimensions"):
        matrix.apply([(1, [1.0, 0.0], 0, 1)])
    with pytest.raises(ValueError, match="expected 3 dimensions"):
        matrix.nearest([1.0], 1)


def test_grows_past_its_first_capacity_and_reports_its_size_in_bytes() -> None:
    rng = np.random.default_rng(1)
    matrix = VectorMatrix(DIM)
    rows = {i: (unit(rng), 0) for i in range(1000)}
    matrix.apply((i, v.tolist(), 0, i + 1) for i, (v, _) in rows.items())
    query = unit(rng).tolist()
    assert [n.row_id for n in matrix.nearest(query, 10)] == brute_force(rows, query, 10)
    assert matrix.nbytes >= 1000 * DIM * 4


def test_reserve_makes_room_once_for_a_partition_of_known_size() -> None:
    rng = np.random.default_rng(2)
    matrix = VectorMatrix(DIM)
    matrix.reserve(1000)
    row_bytes = DIM * 4 + 8 + 8  # vector, id, tag
    assert matrix.nbytes == 1000 * row_bytes
    rows = {i: (unit(rng) * 3, i) for i in range(1000)}  # not unit: extend normalises
    for start in range(0, 1000, 300):  # chunks, as a partition is loaded
        ids = np.arange(start, min(start + 300, 1000), dtype=np.int64)
        matrix.extend(ids, np.stack([rows[i][0] for i in ids]), ids.copy())
    assert matrix.nbytes == 1000 * row_bytes  # no doubling past the reserved size
    assert len(matrix) == 1000
    query = unit(rng).tolist()
    assert [n.row_id for n in matrix.nearest(query, 10)] == brute_force(rows, query, 10)
    assert [n.row_id for n in matrix.nearest(query, 5, (100, 199))] == brute_force(
        rows, query, 5, 100, 199
    )


def test_a_search_leaves_numpys_blas_on_the_calling_thread() -> None:
    # Its own pool would spin a second core after every product (app/core/vector_matrix.py).
    matrix = VectorMatrix(4)
    matrix.extend(np.arange(3), np.eye(3, 4, dtype=np.float32), np.zeros(3, np.int64))
    assert [n.row_id for n in matrix.nearest([1.0, 0.0, 0.0, 0.0], 1)] == [0]
    blas = threadpool_info_of("blas")
    assert blas and all(pool["num_threads"] == 1 for pool in blas)


def threadpool_info_of(api: str) -> list[dict[str, object]]:
    return [pool for pool in threadpoolctl.threadpool_info() if pool["user_api"] == api]


def test_float32_bytes_are_what_sqlite_vec_stores() -> None:
    vector = [0.25, -1.5, 3.0e-8, 1e30]
    assert float32_bytes(vector) == sqlite_vec.serialize_float32(vector)


def test_cosines_of_stored_vectors() -> None:
    rng = np.random.default_rng(7)
    stored = rng.normal(size=(20, 16)).astype(np.float32)
    query = rng.normal(size=16)
    found = cosines([float32_bytes(list(row)) for row in stored], list(query))
    expected = stored @ query / (np.linalg.norm(stored, axis=1) * np.linalg.norm(query))
    assert found == pytest.approx(list(expected), rel=1e-5)
    assert cosines([float32_bytes([0.0, 0.0])], [1.0, 0.0]) == [0.0]  # a zero vector
    assert cosines([], [1.0, 0.0]) == []


def test_best_cosines_keeps_each_owners_nearest_vector() -> None:
    owned = [
        (7, float32_bytes([1.0, 0.0])),
        (7, float32_bytes([0.6, 0.8])),
        (9, float32_bytes([0.0, 1.0])),
        (9, float32_bytes([0.0, 0.0])),  # a zero vector counts 0
    ]
    assert best_cosines(owned, [0.6, 0.8]) == pytest.approx({7: 1.0, 9: 0.8})
    assert best_cosines([(3, float32_bytes([-1.0, 0.0]))], [1.0, 0.0]) == {3: -1.0}
    assert best_cosines([], [1.0, 0.0]) == {}
