"""Would a learned model over the rules' findings and the text's character n-grams decide better
than the rules alone, on the writing of people who never saw either? (Measured; not shipped: it
fails its bar. docs/operations/benchmarks/injection.md reports every number.)

The rules (``policies/injection.py``) say what a text does — addresses the assistant, claims
authority, sends data to an address; on the tune sets of the writers whose texts the rules'
author never read, their `high` findings also flag 4.5–23 % of the look-alikes (a security write-up
quoting a payload, a team's "always run the linter"). The model: a logistic regression over

- every character 2-, 3- and 4-gram of each whitespace-separated word, padded with a space on each
  side (a Chinese run without spaces is one word), lowercased, counted, scaled to unit length;
- one feature per (signal, severity) of the rules' findings.

A text is flagged `high` when a *sure* finding fired (an order in text the reader does not see, tag
characters, a role block, hiding something from the user: chosen on the per-rule counts of the
first eight tune sets, where none of them fired on a harmless text — nor on the ninth's), or when the rules' gate found a trigger word in it and the model's
probability is at or above the threshold.

Rows: every text of ``tests/data/poisoning_tune*.jsonl`` (nine writers), and as harmless texts the
keep layer's training texts (``scripts/train_learned.py``) — none of the chat sets whose turns
measure false positives on conversation. Attacks weigh 1, the tune sets' harmless texts 1, the
training texts together as much as the attacks. Deterministic: gradient descent with Nesterov
momentum, fixed steps; a feature is used when it appears in ≥ ``MIN_DF`` rows of a fit.

Chosen on the tune sets alone, leaving each writer out in turn (the training texts and the
conversation turns split into as many folds by the SHA-256 of the text):

- each L2 strength's threshold: the lowest (in steps of 0.01) at which, for *every* writer left
  out, ≤ 5 % of its look-alikes and ≤ 5 % of its ordinary texts are flagged, and ≤ 1 % of the
  training texts and of the conversation turns;
- the L2 strength: the one whose *worst* writer has the most attacks caught.

The bar, written before any evaluation number of this model was computed: adopted only if, on
*each* of the four evaluation sets, the model catches at least as many attacks as the rules alone
at `high`, with ≤ 5 % of the look-alikes and ≤ 5 % of the ordinary texts flagged, and ≤ 1 % of the
conversation turns. ``--leave-out poisoning_tune9`` reproduces the first run, on eight writers.

Usage: python -m bench.injection_model [--leave-out NAME]   (~12 min on 2 cores)
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import machine, markdown_table
from bench.injection_quality import flagged, rows
from memwarden.policies.injection import _triggered, find_instructions
from memwarden.policies.injection_model import features  # the same n-grams and findings as the shipped check

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import train_learned as tl  # scripts/ is not a package: on sys.path above
from train_injection import learning_rows  # the same rows as the shipped check's training

SURE_RULES = frozenset(
    {
        "injection.hidden.tag_characters",
        "injection.markup.role_block",
        "injection.secrecy.hide_from_user",
        "injection.secrecy.hide_from_user_zh",
    }
)


def sure(rule: str) -> bool:
    """A finding the model does not second-guess: an order found in hidden text (``….hidden``) or
    one of :data:`SURE_RULES`."""
    return rule in SURE_RULES or rule.endswith(".hidden")


L2_CHOICES = (3e-6, 1e-5, 3e-5, 1e-4)
MIN_DF = 2
STEPS = 800
LOOKALIKE_FP = 0.05
ORDINARY_FP = 0.05
TRAINING_FP = 0.01
CONVERSATION_FP = 0.01
DIGITS = 4  # a weight's decimals (as a shipped model would hold them; what is scored)
EVALUATION = ("poisoning_eval", "poisoning_eval2", "poisoning_eval3", "poisoning_eval4")


class Texts:
    """Each text's features, gate and sure findings, computed once."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        found = [[(f.rule, f.severity) for f in find_instructions(t, learned=False)] for t in texts]
        self.features = [features(t, f) for t, f in zip(texts, found, strict=True)]
        self.gate = np.array([bool(_triggered(t.lower())) for t in texts])
        self.sure = np.array([any(sure(rule) for rule, _ in f) for f in found])

    def flag(self, p: np.ndarray, threshold: float) -> np.ndarray:
        return np.asarray(self.sure | (self.gate & (p >= threshold)))


def fit(rows: list[dict[str, float]], attack: np.ndarray, weight: np.ndarray, l2: float) -> dict[str, Any]:
    """Weighted logistic regression over the sparse rows (features seen in ≥ MIN_DF rows)."""
    df: dict[str, int] = {}
    for r in rows:
        for f in r:
            df[f] = df.get(f, 0) + 1
    names = sorted(f for f, n in df.items() if n >= MIN_DF)
    index = {f: i for i, f in enumerate(names)}
    cols, vals, lengths = [], [], []
    for r in rows:
        kept = [(index[f], v) for f, v in r.items() if f in index]
        cols += [c for c, _ in kept]
        vals += [v for _, v in kept]
        lengths.append(len(kept))
    col = np.array(cols, dtype=np.int64)
    val = np.array(vals)
    row = np.repeat(np.arange(len(rows)), lengths)
    y = attack.astype(np.float64)
    total = weight.sum()
    w = np.zeros(len(names))
    b = 0.0
    vw, vb = w.copy(), b
    rate = 4.0
    for step in range(STEPS):
        momentum = step / (step + 3)
        lw, lb = w + momentum * (w - vw), b + momentum * (b - vb)
        z = np.bincount(row, weights=val * lw[col], minlength=len(rows)) + lb
        g = (1.0 / (1.0 + np.exp(-z)) - y) * weight / total
        grad = np.bincount(col, weights=val * g[row], minlength=len(names)) + l2 * lw
        vw, vb = w, b
        w = lw - rate * grad
        b = lb - rate * float(g.sum())
    return {
        "weights": {f: round(x, DIGITS) for f, x in zip(names, w.tolist(), strict=True) if round(x, DIGITS)},
        "bias": round(b, DIGITS),
    }


def probabilities(model: dict[str, Any], rows: list[dict[str, float]]) -> np.ndarray:
    w, b = model["weights"], model["bias"]
    z = np.array([b + sum(w.get(f, 0.0) * v for f, v in r.items()) for r in rows])
    return np.asarray(1.0 / (1.0 + np.exp(-z)))


def fold_of(text: str, k: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % k


@dataclass(frozen=True)
class Tune:
    """The rows a fit learns from, read and judged by the rules once: the tune sets' texts (with
    their writers) and the harmless training texts after them, and the conversation turns."""

    names: list[str]
    writer: np.ndarray  # each row's tune set (its index in names); -1 for a training text
    texts: Texts
    talk: Texts
    attack: np.ndarray
    look: np.ndarray
    in_tune: np.ndarray
    weight: np.ndarray  # attacks 1, the tune sets' harmless texts 1, the training texts as much as the attacks


def tune_rows(left_out: set[str]) -> Tune:
    """Every tune set but ``left_out``, the harmless training texts, the conversation turns."""
    names = sorted(p.stem for p in tl.DATA.glob("poisoning_tune*.jsonl") if p.stem not in left_out)
    tune, harmless, conversation = learning_rows(names)
    attack = np.array([r["label"] == "attack" for _, r in tune] + [False] * len(harmless))
    in_tune = np.arange(len(attack)) < len(tune)
    return Tune(
        names,
        np.array([i for i, _ in tune] + [-1] * len(harmless)),
        Texts([r["text"] for _, r in tune] + harmless),
        Texts(conversation),
        attack,
        np.array([r["category"] == "lookalike" for _, r in tune] + [False] * len(harmless)),
        in_tune,
        np.where(attack | in_tune, 1.0, attack.sum() / (~in_tune).sum()),
    )


def choose(data: Tune) -> tuple[float, float, dict[str, Any]]:
    """The L2 strength and threshold (see the module), and the numbers they were chosen on."""
    names, texts, talk = data.names, data.texts, data.talk
    attack, look, in_tune, weight = data.attack, data.look, data.in_tune, data.weight
    k = len(names)
    fold = np.where(in_tune, data.writer, [fold_of(t, k) for t in texts.texts])
    turn_fold = np.array([fold_of(t, k) for t in talk.texts])
    report: dict[str, Any] = {}
    best: tuple[float, float, float] | None = None
    for l2 in L2_CHOICES:
        held = np.zeros(len(texts.texts))
        turn_p = np.zeros(len(talk.texts))
        for f in range(k):
            train = fold != f
            model = fit([r for r, t in zip(texts.features, train, strict=True) if t], attack[train], weight[train], l2)
            held[~train] = probabilities(model, [r for r, t in zip(texts.features, train, strict=True) if not t])
            mine = turn_fold == f
            turn_p[mine] = probabilities(model, [r for r, m in zip(talk.features, mine, strict=True) if m])
        threshold = None
        for t in np.round(np.arange(0.99, 0.0, -0.01), 2):
            flag = texts.flag(held, t)
            flag_turns = talk.flag(turn_p, t)
            ok = all(
                flag[(fold == f) & look].mean() <= LOOKALIKE_FP
                and flag[(fold == f) & in_tune & ~look & ~attack].mean() <= ORDINARY_FP
                for f in range(k)
            )
            if not (ok and flag[~in_tune].mean() <= TRAINING_FP and flag_turns.mean() <= CONVERSATION_FP):
                break
            threshold = float(t)
        if threshold is None:
            continue
        flag = texts.flag(held, threshold)
        caught = {n: float(flag[(fold == f) & attack].mean()) for f, n in enumerate(names)}
        lookalike = {n: float(flag[(fold == f) & look].mean()) for f, n in enumerate(names)}
        worst = min(caught.values())
        report[f"{l2:g}"] = {
            "threshold": threshold,
            "caught": caught,
            "lookalikes": lookalike,
            "training": float(flag[~in_tune].mean()),
            "turns": float(talk.flag(turn_p, threshold).mean()),
        }
        print(f"l2 {l2:g}: threshold {threshold:.2f}, worst writer's attacks caught {worst:.3f}", file=sys.stderr)
        for n in names:
            print(f"  {n:22s} caught {caught[n]:.3f}  look-alikes flagged {lookalike[n]:.3f}", file=sys.stderr)
        if best is None or worst > best[0]:
            best = (worst, l2, threshold)
    if best is None:
        raise SystemExit("no L2 strength meets the false-positive bounds")
    return best[1], best[2], report


def main() -> None:
    parser = argparse.ArgumentParser(description="a learned injection model: chosen on tune, scored on eval")
    parser.add_argument("--leave-out", action="append", default=[], help="a tune set not to train on")
    left_out = set(parser.parse_args().leave_out)
    if unknown := left_out - {p.stem for p in tl.DATA.glob("poisoning_tune*.jsonl")}:
        parser.error(f"no such tune set: {', '.join(sorted(unknown))}")
    data = tune_rows(left_out)
    l2, threshold, report = choose(data)
    chosen = report[f"{l2:g}"]
    model = fit(data.texts.features, data.attack, data.weight, l2)
    table: list[list[Any]] = []
    passes = True
    for name in EVALUATION:
        data_ = rows(name)
        ev = Texts([r["text"] for r in data_])
        by_model = ev.flag(probabilities(model, ev.features), threshold)
        by_rules = np.array([flagged(t, "high", learned=False) for t in ev.texts])
        a = np.array([r["label"] == "attack" for r in data_])
        similar = np.array([r["category"] == "lookalike" for r in data_])
        for label, mask in (
            ("attacks caught", a),
            ("look-alikes flagged", similar),
            ("ordinary flagged", ~a & ~similar),
        ):
            table.append([name, label, f"{by_rules[mask].mean():.3f}", f"{by_model[mask].mean():.3f}", int(mask.sum())])
        passes &= bool(
            by_model[a].mean() >= by_rules[a].mean()
            and by_model[similar].mean() <= LOOKALIKE_FP
            and by_model[~a & ~similar].mean() <= ORDINARY_FP
        )
    talk = data.talk
    turn_model = talk.flag(probabilities(model, talk.features), threshold)
    turn_rules = np.array([flagged(t, "high", learned=False) for t in talk.texts])
    table.append(
        [
            "conversation turns (distinct texts)",
            "flagged",
            f"{turn_rules.mean():.4f}",
            f"{turn_model.mean():.4f}",
            len(talk.texts),
        ]
    )
    passes &= bool(turn_model.mean() <= CONVERSATION_FP)
    worst = min(chosen["caught"].values())
    print(
        f"# A learned injection model at `high` ({machine()}; l2 {l2:g}, threshold {threshold:.2f}, chosen on tune)\n"
    )
    print("Each tune writer left out (the numbers the choice was made on):\n")
    print(
        markdown_table(
            ["writer left out", "attacks caught", "look-alikes flagged"],
            [[n, f"{c:.3f}", f"{chosen['lookalikes'][n]:.3f}"] for n, c in chosen["caught"].items()],
        )
    )
    print(
        f"\nworst writer {worst:.3f}; training texts flagged {chosen['training']:.4f}, conversation turns {chosen['turns']:.4f}\n"
    )
    print(
        markdown_table(
            ["set (eval: never tuned on; turns: used in the choice)", "", "rules alone", "model", "texts"], table
        )
    )
    print(f"\nthe bar (set before the first evaluation number): {'met' if passes else 'not met'}")


if __name__ == "__main__":
    main()
