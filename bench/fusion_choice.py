"""How the fusion was chosen: candidate fusions of the two arms' rankings, scored on every retrieval
set's **tune** split and every stratum, picked by the **worst** margin over the better single arm.

Each question's two rankings (the semantic arm's cosine list, the keyword arm's BM25 list and the
query's idf mass) are read once from the store, as recall reads them; each candidate then fuses
them in pure Python. The margin of a candidate on a set, or on a stratum pooled over the sets (at least 60 questions), is
its R@5 minus the better arm's R@5 there; a candidate's score is its smallest margin (then its mean
R@5, to break ties).
The eval splits are printed too, for the record, and never looked at by the choice.

Usage: python -m bench.fusion_choice [--json FILE] [--embedder e5|hashing] [--sets a,b]
"""

from __future__ import annotations

import argparse
import asyncio
import pickle
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench import heldout, retrieval
from bench.harness import machine, markdown_table, write_json
from memwarden.db.database import Database
from memwarden.store import fusion
from memwarden.store.embedder import make_embedder
from memwarden.store.keyword import keyword_arm
from memwarden.store.local import LocalStore, RetainItem
from memwarden.store.text import query_terms

POOL = 300
Hits = list[tuple[str, float]]


@dataclass
class Arms:
    semantic: Hits
    keyword: Hits
    mass: float


async def capture(conversations: list[dict[str, Any]], questions: list[heldout.Asked], embedder: str) -> list[Arms]:
    """Each question's two rankings, memory ids replaced by the turn ids they hold."""
    out: list[Arms] = []
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Database.open(Path(tmp), mirror=False)
        try:
            store = LocalStore(ledger, make_embedder(embedder))
            for c in conversations:
                items = [
                    RetainItem(content=t, document_id=i, timestamp=f"{d}T12:00:00Z") for i, t, d in retrieval.turns(c)
                ]
                await store.retain(c["conv"], items)
            doc_of = dict(
                await ledger.read(lambda db: db.execute("SELECT id, document_id FROM store_units").fetchall())
            )
            for q in questions:
                index = await store._indexes.get(q.conv)
                vector = store.embedder.query(q.text)
                semantic = index.search(vector, POOL)
                hits = await ledger.read(
                    partial(keyword_arm, bank=q.conv, words=query_terms(q.text), limit=POOL, terms=store._terms)
                )
                out.append(
                    Arms(
                        [(doc_of[i], s) for i, s in semantic],
                        [(doc_of[i], s) for i, s in hits.ranked],
                        hits.mass,
                    )
                )
        finally:
            ledger.close()
    return out


Fusion = Callable[[Arms], list[str]]


def by_score(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: -scores[i])


def candidates() -> dict[str, Fusion]:
    out: dict[str, Fusion] = {
        "semantic alone": lambda a: [i for i, _ in a.semantic],
        "keyword alone": lambda a: [i for i, _ in a.keyword],
    }
    for gate in (0.8, 0.5, 0.3):
        out[f"gated RRF k60, gate {gate}"] = partial(_gated, gate=gate)
    for k in (10, 30, 60):
        for w in (1.0, 0.75, 0.5):
            out[f"RRF k{k}, keyword weight {w}"] = partial(_rrf, k=k, w=w)
    out["RRF k60, keyword weight by its confidence"] = _confident
    for depth in (10, 20, 40):
        for k in (10, 60):
            out[f"RRF k{k} over each arm's top {depth}"] = partial(_rrf_top, k=k, depth=depth)
    for beta in (0.5, 1.0, 2.0):
        out[f"z(cosine) + {beta} x bm25/mass"] = partial(_zsum, beta=beta, tau=0.0)
        for tau in (0.3, 0.5):
            out[f"z(cosine) + {beta} x max(0, bm25/mass - {tau})"] = partial(_zsum, beta=beta, tau=tau)
    for w in (0.2, 0.35, 0.5, 0.75):
        out[f"z(cosine) + {w} x z(bm25)"] = partial(_zz, w=w)
    for beta in (0.5, 1.0, 1.5):
        out[f"z(cosine) + {beta} x confidence x bm25/mass"] = partial(_adaptive, beta=beta)
    for beta in (0.25, 0.35, 0.75):
        out[f"z(cosine) + {beta} x bm25/mass"] = partial(_zsum, beta=beta, tau=0.0)
    for weight in (0.5, 1.0, 2.0):
        for floor in (0.0, 0.5, 1.0, 1.5):
            out[f"z(cosine) + {weight} x max(0, z of the keyword's first hit - {floor}) x bm25/mass"] = partial(
                _agreement, weight=weight, floor=floor
            )
    for weight in (0.5, 1.0):
        for wmin in (0.1, 0.2, 0.35):
            out[f"agreement {weight}, floor 1.0, keyword weight at least {wmin}"] = partial(
                _agreement, weight=weight, floor=1.0, least=wmin
            )
        for tau in (0.6, 0.8, 1.0):
            out[f"agreement {weight}, floor 1.0, weight 1 when bm25/mass of the first hit >= {tau}"] = partial(
                _agreement, weight=weight, floor=1.0, sure=tau
            )
    for weight in (0.5, 1.0, 2.0):
        for floor in (0.0, 0.5, 1.0):
            out[f"z(cosine) + {weight} x max(0, its own z - {floor}) x bm25/mass"] = partial(
                _agreement, weight=0.0, floor=floor, own=(weight, floor)
            )
            out[f"agreement 1.0 + own agreement {weight}, floor {floor}"] = partial(
                _agreement, weight=1.0, floor=1.0, own=(weight, floor)
            )
    out["current (store/fusion.py)"] = lambda a: by_score(fusion.fuse(a.semantic, a.keyword, a.mass).scores)
    return out


def _rrf(a: Arms, *, k: int, w: float) -> list[str]:
    return by_score(fusion.rrf([[i for i, _ in a.semantic], [i for i, _ in a.keyword]], weights=[1.0, w], k=k))


def _gated(a: Arms, *, gate: float) -> list[str]:
    joined = [i for i, s in a.keyword if s >= gate * a.mass]
    return by_score(fusion.rrf([[i for i, _ in a.semantic], joined], k=60))


def _confident(a: Arms) -> list[str]:
    top = a.keyword[0][1] / a.mass if a.keyword and a.mass else 0.0
    return by_score(fusion.rrf([[i for i, _ in a.semantic], [i for i, _ in a.keyword]], weights=[1.0, min(1.0, top)]))


def _agreement(
    a: Arms,
    *,
    weight: float,
    floor: float,
    least: float = 0.0,
    sure: float | None = None,
    own: tuple[float, float] | None = None,
) -> list[str]:
    """The agreement fusion; ``least``: the keyword weight never below it; ``sure``: weight 1 at
    least when the keyword arm's first hit holds this share of the query's idf mass; ``own``: a
    memory's keyword evidence also counts by its own semantic z-score (weight, floor)."""
    if not a.semantic or not a.keyword or not a.mass:
        return [i for i, _ in (a.semantic or a.keyword)]
    mean, std = _z([s for _, s in a.semantic])
    scores = {i: (s - mean) / std for i, s in a.semantic}
    low = (min(s for _, s in a.semantic) - mean) / std
    w = max(least, weight * max(0.0, scores.get(a.keyword[0][0], low) - floor))
    if sure is not None and a.keyword[0][1] / a.mass >= sure:
        w = max(w, 1.0)
    z = dict(scores)
    for i, s in a.keyword:
        mine = own[0] * max(0.0, z.get(i, low) - own[1]) if own else 0.0
        scores[i] = scores.get(i, low) + (w + mine) * s / a.mass
    return by_score(scores)


def _rrf_top(a: Arms, *, k: int, depth: int) -> list[str]:
    fused = fusion.rrf([[i for i, _ in a.semantic[:depth]], [i for i, _ in a.keyword[:depth]]], k=k)
    rest = [i for i, _ in a.semantic[depth:] if i not in fused]
    return [*by_score(fused), *rest]


def _zsum(a: Arms, *, beta: float, tau: float) -> list[str]:
    if not a.semantic:
        return [i for i, _ in a.keyword]
    cos = [s for _, s in a.semantic]
    mean = sum(cos) / len(cos)
    std = (sum((c - mean) ** 2 for c in cos) / len(cos)) ** 0.5 or 1.0
    low = min(cos)
    scores = {i: (s - mean) / std for i, s in a.semantic}
    for i, s in a.keyword:
        bonus = beta * max(0.0, s / a.mass - tau) if a.mass else 0.0
        scores[i] = scores.get(i, (low - mean) / std) + bonus
    return by_score(scores)


def _z(values: list[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    return mean, (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5 or 1.0


def _zz(a: Arms, *, w: float) -> list[str]:
    if not a.semantic or not a.keyword:
        return [i for i, _ in (a.semantic or a.keyword)]
    cm, cs = _z([s for _, s in a.semantic])
    km, ks = _z([s for _, s in a.keyword])
    c_low = (min(s for _, s in a.semantic) - cm) / cs
    k_low = (min(s for _, s in a.keyword) - km) / ks
    scores = {i: (s - cm) / cs + w * k_low for i, s in a.semantic}
    for i, s in a.keyword:
        scores[i] = scores.get(i, c_low + w * k_low) - w * k_low + w * (s - km) / ks
    return by_score(scores)


def _adaptive(a: Arms, *, beta: float) -> list[str]:
    if not a.semantic or not a.keyword or not a.mass:
        return [i for i, _ in (a.semantic or a.keyword)]
    cm, cs = _z([s for _, s in a.semantic])
    low = (min(s for _, s in a.semantic) - cm) / cs
    confidence = min(1.0, a.keyword[0][1] / a.mass)
    scores = {i: (s - cm) / cs for i, s in a.semantic}
    for i, s in a.keyword:
        scores[i] = scores.get(i, low) + beta * confidence * s / a.mass
    return by_score(scores)


def features(a: Arms) -> tuple[list[str], Any]:
    """Each candidate of either arm and its features (numpy rows), for a learned fusion."""
    import numpy as np

    ids = list(dict.fromkeys([*(i for i, _ in a.semantic), *(i for i, _ in a.keyword)]))
    cos = dict(a.semantic)
    bm = dict(a.keyword)
    values = [s for _, s in a.semantic] or [0.0]
    mean, std = _z(values)
    low = min(values)
    sem_rank = {i: r for r, (i, _) in enumerate(a.semantic)}
    kw_rank = {i: r for r, (i, _) in enumerate(a.keyword)}
    conf = min(1.5, a.keyword[0][1] / a.mass) if a.keyword and a.mass else 0.0
    rows = []
    for i in ids:
        c = cos.get(i, low)
        k = min(1.5, bm.get(i, 0.0) / a.mass) if a.mass else 0.0
        rows.append(
            [
                (c - mean) / std,
                c,
                k,
                k * conf,
                1.0 / (1 + sem_rank.get(i, 300)),
                1.0 / (1 + kw_rank.get(i, 300)),
                conf,
            ]
        )
    return ids, np.asarray(rows, dtype=np.float64)


def fit_learned(sets: dict[str, tuple[list[heldout.Asked], list[Arms]]], l2: float = 1e-3) -> Any:
    """A pointwise logistic model over the candidates' features, on the tune split's questions of
    every set (positives: the evidence turns), each set weighted equally."""
    import numpy as np

    xs, ys, ws = [], [], []
    for questions, arms in sets.values():
        tune = [(q, a) for q, a in zip(questions, arms, strict=True) if q.split == "tune"]
        for q, a in tune:
            ids, x = features(a)
            xs.append(x)
            ys.append(np.asarray([i in q.evidence for i in ids], dtype=np.float64))
            ws.append(np.full(len(ids), 1.0 / len(tune)))
    x = np.concatenate(xs)
    y = np.concatenate(ys)
    w = np.concatenate(ws)
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    xn = (x - mu) / sd
    theta = np.zeros(x.shape[1])
    bias = 0.0
    for _ in range(3000):
        p = 1 / (1 + np.exp(-(xn @ theta + bias)))
        g = (p - y) * w
        theta -= 0.5 * (xn.T @ g / w.sum() + l2 * theta)
        bias -= 0.5 * g.sum() / w.sum()
    return mu, sd, theta, bias


def learned(model: Any) -> Fusion:
    mu, sd, theta, bias = model

    def fuse(a: Arms) -> list[str]:
        ids, x = features(a)
        if not ids:
            return []
        score = ((x - mu) / sd) @ theta + bias
        return [ids[j] for j in sorted(range(len(ids)), key=lambda j: -score[j])]

    return fuse


def fit_relevance(sets: dict[str, tuple[list[heldout.Asked], list[Arms]]]) -> tuple[float, float, float]:
    """The relevance's coefficients (store/fusion.py: RELEVANCE_*): a logistic model of "an evidence
    turn" over (cosine, min(1.5, BM25 / idf mass)) on the tune splits' candidates, the evidence and
    the rest weighted alike; printed with the evaluation splits' medians."""
    import numpy as np

    def data(split: str) -> tuple[Any, Any]:
        xs, ys = [], []
        for questions, arms in sets.values():
            for q, a in zip(questions, arms, strict=True):
                if q.split != split:
                    continue
                cos, bm = dict(a.semantic), dict(a.keyword)
                low = min(cos.values()) if cos else 0.0
                ids = list(dict.fromkeys([*cos, *bm]))
                xs.append([[cos.get(i, low), min(1.5, bm.get(i, 0.0) / a.mass) if a.mass else 0.0] for i in ids])
                ys.append([i in q.evidence for i in ids])
        return np.concatenate([np.asarray(x) for x in xs]), np.concatenate([np.asarray(y, dtype=float) for y in ys])

    x, y = data("tune")
    w = np.where(y == 1, 0.5 / y.sum(), 0.5 / (len(y) - y.sum()))
    mu, sd = x.mean(axis=0), x.std(axis=0)
    xn = (x - mu) / sd
    theta, bias = np.zeros(2), 0.0
    for _ in range(5000):
        g = (1 / (1 + np.exp(-(xn @ theta + bias))) - y) * w
        theta -= xn.T @ g
        bias -= g.sum()
    a, b = theta / sd
    c = bias - float((mu / sd) @ theta)
    ex, ey = data("eval")
    p = 1 / (1 + np.exp(-(ex @ np.array([a, b]) + c)))
    print(f"relevance: sigma({a:.2f} cosine + {b:.2f} min(1.5, bm25/mass) {c:+.2f});", end=" ")
    print(f"eval medians: evidence {np.median(p[ey == 1]):.2f}, other {np.median(p[ey == 0]):.2f}")
    return float(a), float(b), float(c)


MIN_STRATUM = 60  # questions: under it one question moves R@5 by more than 0.017 (reported, not chosen on)


def evaluate(
    sets: dict[str, tuple[list[heldout.Asked], list[Arms]]], fusions: dict[str, Fusion], split: str
) -> list[dict[str, Any]]:
    """Each fusion's worst margin over the better arm, over every set as a whole and every stratum
    pooled over the sets that has at least MIN_STRATUM questions (a single set's strata are too
    small to choose on: bench/heldout.py reports them)."""
    rows = []
    pooled_questions = [(q, a) for questions, arms in sets.values() for q, a in zip(questions, arms, strict=True)]
    groups = {name: list(zip(questions, arms, strict=True)) for name, (questions, arms) in sets.items()}
    groups["all sets"] = pooled_questions
    for name, fuse in fusions.items():
        margins: list[tuple[float, str]] = []
        r5s = []
        for set_name, pairs in groups.items():
            fused = {id(q): retrieval.first_hit(list(fuse(a)), q.evidence) for q, a in pairs}
            sem = {id(q): retrieval.first_hit([i for i, _ in a.semantic], q.evidence) for q, a in pairs}
            kw = {id(q): retrieval.first_hit([i for i, _ in a.keyword], q.evidence) for q, a in pairs}
            for stratum, test in heldout.STRATA.items():
                sub = [q for q, _ in pairs if q.split == split and test(q)]
                if (set_name != "all sets" and stratum != "all") or (len(sub) < MIN_STRATUM and stratum != "all"):
                    continue
                if not sub:  # a set with no question in this split (all ``eval``, or all ``tune``)
                    continue

                def r5(table: dict[int, int | None], sub: list[heldout.Asked] = sub) -> float:
                    return sum(1 for q in sub if (r := table[id(q)]) is not None and r <= 5) / len(sub)

                margins.append((round(r5(fused) - max(r5(sem), r5(kw)), 3), f"{set_name}: {stratum}"))
                if stratum == "all" and set_name != "all sets":
                    r5s.append(r5(fused))
        worst = min(margins)
        rows.append(
            {
                "fusion": name,
                "worst_margin": worst[0],
                "where": worst[1],
                "mean_R@5": round(sum(r5s) / len(r5s), 3),
                "min_R@5": round(min(r5s), 3),
            }
        )
    rows.sort(key=lambda r: (-r["worst_margin"], -r["mean_R@5"]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--embedder", default="e5", choices=["e5", "hashing"])
    parser.add_argument("--sets", default=",".join(heldout.RETRIEVAL_SETS))
    parser.add_argument("--cache", type=Path, help="keep the captured rankings in this file (pickle) and reuse them")
    args = parser.parse_args()
    sets: dict[str, tuple[list[heldout.Asked], list[Arms]]] = {}
    if args.cache is not None and args.cache.exists():
        sets = pickle.loads(args.cache.read_bytes())  # noqa: S301 (a file this command wrote)
    for name in args.sets.split(","):
        if name not in sets:
            conversations, questions = heldout.load_questions(name)
            sets[name] = (questions, asyncio.run(capture(conversations, questions, args.embedder)))
    sets = {name: sets[name] for name in args.sets.split(",")}
    if args.cache is not None:
        args.cache.write_bytes(pickle.dumps(sets))
    fit_relevance(sets)
    fusions = candidates()
    model = fit_learned(sets)
    print(
        "learned fusion (mu, sd, theta, bias):",
        [list(map(float, v)) if hasattr(v, "__len__") else float(v) for v in model],
    )
    fusions["learned (logistic over both arms' features)"] = learned(model)
    result: dict[str, Any] = {"machine": machine()}
    for split in ("tune", "eval"):
        rows = evaluate(sets, fusions, split)
        result[split] = rows
        print(f"\n{split} split{' (the choice)' if split == 'tune' else ' (never looked at by the choice)'}\n")
        cells = [[r["fusion"], f"{r['worst_margin']:+.3f}", r["where"], r["mean_R@5"], r["min_R@5"]] for r in rows]
        print(markdown_table(["fusion", "worst margin", "where", "mean R@5 (sets)", "min R@5 (sets)"], cells))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
