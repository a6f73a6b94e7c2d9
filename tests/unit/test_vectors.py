"""The in-memory vector index: exact search, and the HNSW graph built past a size."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from memwarden.store.vectors import BankIndex

DIM = 64


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def vectors(n: int, seed: int = 0) -> np.ndarray:
    return unit(np.random.default_rng(seed).normal(size=(n, DIM)))


def ids(n: int, prefix: str = "m") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def with_graph(rows: int) -> BankIndex:
    """An index of ``rows`` vectors whose graph, built at that size, is ready."""
    index = BankIndex(DIM, "test", ann_threshold=rows)
    index.add(ids(rows), vectors(rows))
    assert index.wait_ready(60)
    return index


def exact_top(index: BankIndex, query: np.ndarray, k: int) -> list[str]:
    threshold, index.ann_threshold = index.ann_threshold, 0
    ann, index._ann = index._ann, None
    try:
        return [i for i, _ in index.search(query, k)]
    finally:
        index._ann, index.ann_threshold = ann, threshold


def test_below_the_threshold_search_is_exact() -> None:
    index = BankIndex(DIM, "test", ann_threshold=1000)
    data = vectors(500)
    index.add(ids(500), data)
    assert index.kind == "exact"
    assert not index.wait_ready(0.2)
    found = index.search(data[42], 5)
    assert found[0][0] == "m42"
    assert abs(found[0][1] - 1.0) < 1e-5
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)


def test_the_exact_scan_never_yields_a_removed_row_even_asked_for_more_than_are_live() -> None:
    """The tail scan beside a graph asks for k rows of a tail that may hold fewer live ones:
    removed rows (masked, scored -inf) must not come back, the rest best first."""
    index = BankIndex(DIM, "test")
    data = vectors(10)
    index.add(ids(10), data)
    index.remove(["m3", "m7"])
    rows = index._exact(data[0], 10, 0)
    assert set(rows) == set(range(10)) - {3, 7}
    assert list(rows.values()) == sorted(rows.values(), reverse=True)
    assert next(iter(rows)) == 0
    assert set(index._exact(data[0], 10, 5)) == {5, 6, 8, 9}


def test_past_the_threshold_a_graph_answers_like_exact_search() -> None:
    index = BankIndex(DIM, "test", ann_threshold=2000)
    data = vectors(3000)
    index.add(ids(3000), data)
    assert index.wait_ready(60)
    assert index.kind == "hnsw"
    queries = unit(data[:50] + np.random.default_rng(1).normal(scale=0.3, size=(50, DIM)))
    overlap = [
        len({i for i, _ in index.search(q, 10)} & set(exact_top(index, q, 10))) / 10 for q in queries.astype(np.float32)
    ]
    assert np.mean(overlap) >= 0.95
    # Similarities, not distances: a stored vector finds itself at ~1.0.
    top = index.search(data[7], 3)
    assert top[0][0] == "m7"
    assert abs(top[0][1] - 1.0) < 1e-4


def test_the_graph_follows_adds_removals_and_replacements() -> None:
    index = BankIndex(DIM, "test", ann_threshold=1000)
    data = vectors(1200)
    index.add(ids(1200), data)
    assert index.wait_ready(60)

    index.remove(["m5"])
    assert "m5" not in {i for i, _ in index.search(data[5], 20)}

    fresh = vectors(10, seed=9)
    index.add(ids(10, "new"), fresh)
    assert index.search(fresh[3], 1)[0][0] == "new3"

    # A memory re-added with another vector: found by the new one, never twice.
    index.add(["m9"], fresh[4:5])
    found = [i for i, _ in index.search(fresh[4], 5)]
    assert found[0] in {"m9", "new4"}
    assert found.count("m9") == 1
    assert index.live == 1200 - 1 + 10

    # Asking for more than there is returns what there is.
    assert len(index.search(data[0], 5000)) == index.live


def test_rows_that_arrive_or_go_during_the_build_are_not_lost() -> None:
    index = BankIndex(DIM, "test", ann_threshold=4000)
    data = vectors(4000)
    index.add(ids(4000), data)  # the build starts in the background
    late = vectors(50, seed=5)
    index.add(ids(50, "late"), late)
    index.remove(["m100", "m200"])
    assert index.wait_ready(60)
    assert index.kind == "hnsw"
    assert index.search(late[17], 1)[0][0] == "late17"
    assert "m100" not in {i for i, _ in index.search(data[100], 20)}
    assert "m200" not in {i for i, _ in index.search(data[200], 20)}


def wait_covered(index: BankIndex, rows: int) -> None:
    deadline = time.monotonic() + 60
    while index.covered < rows and time.monotonic() < deadline:
        time.sleep(0.05)
    assert index.covered == rows


def test_a_growing_tail_goes_into_the_graph_and_past_its_room_a_new_graph_is_built() -> None:
    index = with_graph(1000)
    assert index.covered == 1000
    graph = index._ann
    index.add(ids(50, "a"), vectors(50, seed=2))  # a twentieth: searched exactly for now
    time.sleep(0.3)
    assert index.covered == 1000
    more = vectors(100, seed=3)
    index.add(ids(100, "b"), more)  # past a twentieth: inserted into the same graph
    wait_covered(index, 1150)
    assert index._ann is graph
    assert index.search(more[42], 1)[0][0] == "b42"
    assert index.search(vectors(50, seed=2)[7], 1)[0][0] == "a7"
    rest = vectors(900, seed=4)
    index.add(ids(900, "c"), rest)  # 2,050 rows: past the room of the first graph (2,048)
    wait_covered(index, 2050)
    assert index._ann is not graph
    assert index.search(rest[5], 1)[0][0] == "c5"
    assert index.search(more[42], 1)[0][0] == "b42"


def test_rows_that_arrive_while_the_graph_takes_in_its_tail_follow_without_another_add(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = with_graph(1000)
    insert = index._insert

    def slow_insert(*args: Any) -> None:
        time.sleep(0.3)  # the second add below lands while this insertion runs
        insert(*args)

    monkeypatch.setattr(index, "_insert", slow_insert)
    index.add(ids(100, "a"), vectors(100, seed=7))
    index.add(ids(100, "b"), vectors(100, seed=8))  # an insertion is under way: not started here
    wait_covered(index, 1200)  # taken in when the first insertion ends
    assert index.search(vectors(100, seed=8)[9], 1)[0][0] == "b9"


def test_a_row_removed_while_the_graph_takes_in_the_tail_is_not_found() -> None:
    index = with_graph(1000)
    tail = vectors(10, seed=6)
    index.add(ids(10, "t"), tail)
    index._ann.add_items(tail, ids=np.arange(1000, 1010))  # an insertion caught half-way
    index.remove(["t3"])
    assert "t3" not in {i for i, _ in index.search(tail[3], 5)}
    assert index.search(tail[4], 1)[0][0] == "t4"


def test_removing_everything_the_graph_covers_falls_back_to_the_matrix() -> None:
    index = with_graph(1000)
    tail = vectors(5, seed=4)
    index.add(ids(5, "t"), tail)
    index.remove(ids(1000))
    assert next(i for i, _ in index.search(tail[2], 10)) == "t2"
    assert len(index.search(tail[2], 10)) == 5


def test_the_index_keeps_the_row_keys_it_is_given_for_live_ids_only() -> None:
    index = BankIndex(DIM, "test")
    index.add(ids(3), vectors(3), [11, 12, 13])
    index.add(["x"], vectors(1, seed=5))  # no key given (the store always gives one)
    index.add(["m1"], vectors(1, seed=6), [20])  # re-added (a replaced row): the new key
    index.remove(["m2"])
    assert index.seq == {"m0": 11, "m1": 20}


def test_searches_run_while_the_graph_takes_in_its_tail() -> None:
    """Inserts beside queries (voyager allows them; a resize would not be safe, and never happens
    here): every search during the extensions answers with live rows."""
    import threading

    index = with_graph(2000)
    graph, stop, errors, answered = index._ann, threading.Event(), [], [0]
    queries = vectors(64, seed=9)
    known = set(index.row) | {f"x{b}-{j}" for b in range(5) for j in range(400)}
    gone: list[str] = []  # ids whose removal had returned (appended after it)

    def search() -> None:
        while not stop.is_set():
            try:
                removed_before = set(gone[: len(gone)])  # removals done before this search began
                found = index.search(queries[answered[0] % 64], 10)
                assert len(found) == 10
                # Rows that were live while it ran: never one removed before it began (a removal
                # during the search may or may not be seen), never an id no one added.
                assert all(i in known and i not in removed_before for i, _ in found)
                answered[0] += 1
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
                return

    worker = threading.Thread(target=search)
    worker.start()
    try:
        for batch in range(5):
            index.add(ids(400, f"x{batch}-"), vectors(400, seed=20 + batch))
            tail = [f"x{batch}-{j}" for j in range(0, 400, 7)]
            index.remove(tail)  # in the tail being inserted
            gone.extend(tail)
            beside = [f"m{batch * 10 + j}" for j in range(5)]
            index.remove(beside)  # in the graph, beside the insertion
            gone.extend(beside)
            wait_covered(index, 2000 + 400 * (batch + 1))
    finally:
        stop.set()
        worker.join()
    assert not errors, errors
    assert answered[0] > 0
    assert index._ann is graph  # 4,000 rows: within the room of the first graph (4,096)
