"""Leave one writer out: the topic head's accuracy on a writer it has not seen, the e5 head alone, the
n-gram reader alone (``policies/topic_grams.py``) and the two blended — how the reader's C, the
n-grams it weighs and its weight were chosen (``scripts/train_topic_grams.py``: the best *worst*
writer, then the best mean).

Each set of topic-labelled facts ``scripts/train_learned.py`` trains the topic head on (the
vocabulary's examples always stay in) is held out in turn; the e5 head (at ``--l2``, the strength the
trainer picks) and the reader are trained on the others and label it. Training and tune data only:
no evaluation split is read. Prints one row per candidate; writes nothing (~20 min on two cores:
the reader's L-BFGS fits dominate).

Usage: python scripts/topic_writers.py [--l2 0.001] [--c 10,30] [--min-df 3,5] [--weights 0.5,0.6,0.7,0.8]
"""

from __future__ import annotations

import argparse

import numpy as np
import train_learned as tl  # scripts/ is the script's own directory: on sys.path; it puts the repository there
import train_topic_grams as tg

from memwarden.policies.topic_grams import FORM
from memwarden.policies.vocabulary import TOPICS
from memwarden.store.embedder import E5Embedder


def sourced_topics() -> list[tuple[str, str, str]]:
    """(set, text, topic): the topic head's rows with the set each comes from, as train_learned reads them."""
    out = []
    for name in tl.ITEM_SETS:
        chosen = tl.rows(name)
        if name == "labelled_items.jsonl":
            chosen = [r for r in chosen if r["split"] == "tune"]
        out += [(name, r["text"], r["topic"]) for r in chosen if r["keep"] and r.get("topic")]
    for name in tl.HELD_OUT_ITEMS:
        tune = [r for r in tl.rows(name) if r["split"] == "tune"]
        out += [(name, r["text"], r["topic"]) for r in tune if r["keep"] and r.get("topic")]
    for name in tl.LABEL_SETS:
        out += [(name, r["text"], r["topic"]) for r in tl.rows(name) if r["keep"] and r.get("topic")]
    for topic, entry in TOPICS.items():
        out += [("vocabulary", text, topic) for text in (entry.description, *entry.examples)]
    return out


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return np.asarray(z - np.log(np.exp(z).sum(axis=1, keepdims=True)))


FORMS = ("log-probabilities", "scaled by coverage", "evidence")


def blend(
    form: str, weight: float, e5: np.ndarray, reader: np.ndarray, evidence: np.ndarray, coverage: np.ndarray
) -> np.ndarray:
    """The blended scores (argmax: the topic), as ``policies/topic_grams.py`` forms them: the reader's
    log-probabilities at ``weight``; the same, ``weight`` scaled by the share of the text the reader
    knows; or its n-grams' evidence without its prior (the class weights' sum), at ``weight``."""
    if form == "log-probabilities":
        return (1 - weight) * e5 + weight * reader
    if form == "scaled by coverage":
        w = weight * coverage
        return np.asarray((1 - w) * e5 + w * reader)
    return (1 - weight) * e5 + weight * evidence


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument("--c", default="10,30")
    parser.add_argument("--min-df", default="3,5")
    parser.add_argument("--weights", default="0.5,0.6,0.7,0.8")
    args = parser.parse_args()
    from sklearn.linear_model import LogisticRegression

    pairs = sourced_topics()
    texts = [t for _, t, _ in pairs]
    classes = sorted({c for *_, c in pairs})
    y = np.array([classes.index(c) for *_, c in pairs])
    src = np.array([s for s, *_ in pairs])
    writers = [s for s in dict.fromkeys(src.tolist()) if s != "vocabulary"]
    unique = sorted(set(texts))
    vectors = dict(zip(unique, E5Embedder(engine="onnx").passages_each(unique).astype(np.float64), strict=True))
    x = np.stack([vectors[t] for t in texts]) * tl.SCALE
    fits = tl.fit_many(
        x,
        tl.one_hot([c for *_, c in pairs], classes),
        [(src != w).astype(float) for w in writers],
        [args.l2] * len(writers),
    )
    e5 = {w: log_softmax(x[src == w] @ f[0] + f[1]) for w, f in zip(writers, fits, strict=True)}

    def accuracy(predicted: dict[str, np.ndarray]) -> list[float]:
        return [float((predicted[w].argmax(1) == y[src == w]).mean()) for w in writers]

    table: list[tuple[str, list[float]]] = [("e5 head alone", accuracy(e5))]
    for min_df in (int(v) for v in args.min_df.split(",")):
        # Each writer held out of the n-grams' counting too: its texts meet the reader as new text does.
        held = {w: tg.gram_matrix(texts, min_df, counted=(src != w).tolist())[0] for w in writers}
        for c in (float(v) for v in args.c.split(",")):
            reader, evidence, coverage = {}, {}, {}
            for w in writers:
                g = held[w]
                m = LogisticRegression(C=c, max_iter=5000, solver="lbfgs").fit(g[src != w], y[src != w])
                reader[w] = m.predict_log_proba(g[src == w])
                evidence[w] = np.asarray(g[src == w] @ m.coef_.T)  # the n-grams' say, without the prior
                coverage[w] = np.sqrt(np.asarray(g[src == w].multiply(g[src == w]).sum(axis=1)))
            name = f"min_df {min_df}, C {c:g}"
            table.append((f"{name}: reader alone", accuracy(reader)))
            for weight in (float(v) for v in args.weights.split(",")):
                for form in FORMS:
                    blended = {w: blend(form, weight, e5[w], reader[w], evidence[w], coverage[w]) for w in writers}
                    table.append((f"{name}, weight {weight:g}, {form}", accuracy(blended)))
    shipped = f"min_df {tg.GRAMS_MIN_DF}, C {tg.GRAMS_C:g}, weight {tg.GRAMS_WEIGHT:g}, {FORM}"
    print(f"held out, one at a time: {', '.join(f'{w} ({int((src == w).sum())})' for w in writers)}\n")
    print("| candidate | " + " | ".join(w.removesuffix(".jsonl") for w in writers) + " | worst | mean |")
    print("|---|" + "---|" * (len(writers) + 2))
    for name, accs in table:
        mark = " (shipped)" if name == shipped else ""
        cells = " | ".join(f"{a:.3f}" for a in accs)
        print(f"| {name}{mark} | {cells} | {min(accs):.3f} | {np.mean(accs):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
