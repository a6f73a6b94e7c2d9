"""Judgement and retrieval on every labelled set, tune and eval, in one run: what memwarden keeps of
facts and of noise, its topic labels, and every retrieval arm beside the fusion and plain BM25.

The sets (``tests/data``), each written by writers who saw neither memwarden's rules and models nor
the other sets, each split once into ``tune`` (what choices may look at) and ``eval`` (only
measured; docs/operations/benchmarks/held-out.md, *Caveats*, says which choice an evaluation number moved):

* **items** — one memory candidate an item: ``labelled_items`` (720: seven styles, work and life),
  ``oneliners`` (561 one-line user facts, preferences and instructions as assistants' users type
  them, and the pleasantries, questions and requests beside them; split by the text's SHA-256),
  ``worklogs`` (support logs, an agent's tool-use log, meeting notes; split by document),
  ``oneliners2`` (500 one-liners by a later writer: all ``eval``), ``worklogs2`` and ``worklogs3``
  (two later writers' work logs from rarely written-about trades, English and Chinese: all ``eval``),
  ``worklogs4``–``6`` and ``agent_memories`` (four writers later again, all ``eval``: English and
  Chinese workplaces outside software, small organisations' notes in world Englishes, assistants'
  memories of users in thirty occupations);
* **turns** — long conversations retained one turn an item, as a Mem0 ``add`` or a per-message
  agent does: ``chat_friends_en`` (friends and family over months: exclamations, photos, thanks),
  ``chat_friends_zh`` (WeChat-style Chinese and Chinese/English code-switching), ``work_threads``
  (a support desk, a coding agent's sessions, meeting minutes, a startup's mixed-language chat),
  and, all ``eval``, by later writers: ``chat_personal_en2`` (a son and his widowed mother, gamer
  friends in slang, two former coworkers' voice-to-text rambles) and ``assistant_chat2`` (a user and
  an assistant over months, English, Chinese and code-switching: facts dropped in requests), and
  by two writers later again, ``chat_personal3`` (university friends abroad, a grandmother and her
  one-word-answer grandson, a parents' carpool group, two nurses between shifts, a long-distance
  couple) and ``assistant_chat3`` (a retired teacher in Chengdu, a PhD student in Germany
  code-switching, a bakery owner answering in two words, two colleagues at a Shenzhen startup),
  and by two writers later again, ``chat_personal4`` (a widower and his daughter abroad, Lagos
  school friends, Singlish colleagues, a touring musician, a role-playing group) and ``chat_zh4``
  (a Hong Kong family in written Cantonese, Taiwanese classmates, a 东北 family typing by voice, a
  student abroad code-switching, a user and an assistant), and by two writers later again,
  ``chat_personal5`` (a Jamaican aunt and her nephew in patois, Kilkenny hurlers, a Deaf woman and
  her hearing friend, an oil-rig worker and his wife in Doric, three Texas sisters' voice notes) and
  ``chat_zh5`` (a Chengdu hotpot family in Sichuanese, livestream sellers, an old worker's voice
  typing, a programmer in Singapore and her mother, a dorm group after graduation), and by two
  writers later again, ``chat_personal6`` (a Durban grandmother and her grandson abroad, Taglish
  sisters, an Australian cattle station, an Ohio book club, two Polish-British brothers) and
  ``chat_zh6`` (a Shanghai family group, a 团购 group of mothers, a Shaanxi father's voice typing and
  his son delivering food, two 00后 friends in slang, a Malaysian Chinese woman and her cousin in Taipei);
  each turn labelled fact or not, each question naming the turns that answer it; split by
  conversation. Reported: fact turns kept, the turns the questions are about kept, the other
  turns (pleasantries, reactions, questions back) rejected;
* **retrieval** — the same conversations plus ``recall_conversations`` (540 questions over 12
  conversations) and two ``tune`` sets by two more writers, ``recall_tune_en`` (200 questions over 5
  conversations: two sisters, a landlord and tenant, a running club, a family's house move, two game
  developers) and ``recall_tune_zh`` (160 over 4, Chinese and code-switched), half their questions
  worded like their answers and a third temporal, and ``recall_tune_natural`` (210 over 6, English,
  Chinese and mixed, asked as people ask, the same names in dozens of turns): each turn a memory (``Speaker: text``, the session's date), each conversation a
  bank of one store; R@5, R@10 and MRR of the keyword arm, the semantic arm, the fusion recall
  answers with, and plain SQLite FTS5 BM25; per stratum (worded like the answer / paraphrased, by
  the writer's label and by shared content terms; temporal; multi-hop; per language). The fusion's
  margin is fused R@5 minus the better arm's (docs/operations/benchmarks/held-out.md, *Retrieval*: never below −0.01).

Usage: python -m bench.heldout [--json FILE] [--skip-retrieval] [--skip-judgement] [--embedder e5|hashing]
                                [--sets NAME,NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import retrieval
from bench.harness import DATA, machine, markdown_table, write_json
from memwarden.governance.state import build_pipeline
from memwarden.policies.judgement import Judgement
from memwarden.policies.labels import TOPICS
from memwarden.policies.pipeline import Pipeline
from memwarden.settings import GovernanceSettings, LabelsSettings

ITEM_SETS = (
    "labelled_items",
    "oneliners",
    "worklogs",
    "oneliners2",
    "worklogs2",
    "worklogs3",
    "worklogs4",
    "worklogs5",
    "worklogs6",
    "agent_memories",
)
TURN_SETS = (
    "chat_friends_en",
    "chat_friends_zh",
    "work_threads",
    "chat_personal_en2",
    "assistant_chat2",
    "chat_personal3",
    "assistant_chat3",
    "chat_personal4",
    "chat_zh4",
    "chat_personal5",
    "chat_zh5",
    "chat_personal6",
    "chat_zh6",
)
# Retrieval only, all ``tune``: two writers' conversations with half their questions worded like
# their answers and a third temporal, added to check the fusion's choice on more tune questions.
RETRIEVAL_TUNE_SETS = ("recall_tune_en", "recall_tune_zh", "recall_tune_natural")
RETRIEVAL_SETS = ("recall_conversations", *TURN_SETS, *RETRIEVAL_TUNE_SETS)
ENGINEERING = frozenset({"infra", "dev_tools", "code"})


def rows(name: str) -> list[dict[str, Any]]:
    path = DATA / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class Item:
    text: str
    keep: bool
    topic: str | None
    lang: str
    split: str


def items(name: str) -> list[Item]:
    return [Item(r["text"], bool(r["keep"]), r.get("topic"), r.get("lang", "en"), r["split"]) for r in rows(name)]


def ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def judge_all(pipeline: Pipeline, texts: Sequence[str], before: Sequence[str | None] | None = None) -> list[Judgement]:
    """Every text judged as one retain request of its own batch of 64 (one embedding call a batch);
    ``before``: each text's turn before it, when memwarden is to know it."""
    out: list[Judgement] = []
    for start in range(0, len(texts), 64):
        chunk = [(t, []) for t in texts[start : start + 64]]
        out += pipeline.judge_many(chunk, before=None if before is None else before[start : start + 64])
    return out


def item_scores(name: str, split: str, cases: list[Item], judged: list[Judgement]) -> dict[str, Any]:
    facts = [(c, j) for c, j in zip(cases, judged, strict=True) if c.keep]
    noise = [(c, j) for c, j in zip(cases, judged, strict=True) if not c.keep]
    topical = [(c, j) for c, j in facts if c.topic and j.verdict != "reject"]
    return {
        "set": name,
        "split": split,
        "facts": len(facts),
        "facts_kept": ratio(sum(j.verdict != "reject" for _, j in facts), len(facts)),
        "noise": len(noise),
        "noise_rejected": ratio(sum(j.verdict == "reject" for _, j in noise), len(noise)),
        "topic_accuracy": ratio(sum(j.topic == c.topic for c, j in topical), len(topical)),
        "people_in_engineering": sum(c.topic == "personal" and j.topic in ENGINEERING for c, j in topical),
        "engineering_in_personal": sum(c.topic in ENGINEERING and j.topic == "personal" for c, j in topical),
    }


def confusion(pairs: list[tuple[str, str]]) -> list[list[Any]]:
    """Rows: the writer's topic; columns: memwarden's; the last column the row's accuracy."""
    counts = Counter(pairs)
    out = []
    for truth in TOPICS:
        row = [counts[(truth, guess)] for guess in TOPICS]
        total = sum(row)
        out.append([truth, *row, f"{row[TOPICS.index(truth)] / total:.3f}" if total else "—"])
    return out


@dataclass
class Turn:
    id: str
    text: str
    speaker: str
    fact: bool
    evidence: bool  # a question is about it
    split: str
    lang: str
    before: str = ""  # the turn before it in its session ("" for a session's first)


def conversation_split(conv: dict[str, Any]) -> str:
    return str(conv.get("split") or ("eval" if conv["conv"] in retrieval.EVAL else "tune"))


def turns_of(name: str) -> list[Turn]:
    data = rows(name)
    asked = {e for r in data if r["type"] == "question" for e in r["evidence"]}
    out = []
    for conv in (r for r in data if r["type"] == "conversation"):
        split = conversation_split(conv)
        for session in conv["sessions"]:
            before = ""
            for t in session["turns"]:
                fact, evidence = bool(t["fact"]), t["id"] in asked
                out.append(Turn(t["id"], t["text"], t["speaker"], fact, evidence, split, conv["lang"], before))
                before = t["text"]
    return out


def turn_scores(name: str, split: str, turns: list[Turn], judged: list[Judgement], form: str) -> dict[str, Any]:
    def kept(test: Callable[[Turn], bool]) -> tuple[int, int]:
        chosen = [j for t, j in zip(turns, judged, strict=True) if test(t)]
        return sum(j.verdict != "reject" for j in chosen), len(chosen)

    facts, n_facts = kept(lambda t: t.fact)
    evidence, n_evidence = kept(lambda t: t.evidence)
    other, n_other = kept(lambda t: not t.fact and not t.evidence)
    return {
        "set": name,
        "split": split,
        "form": form,
        "turns": len(turns),
        "fact_turns": n_facts,
        "fact_turns_kept": ratio(facts, n_facts),
        "evidence_turns": n_evidence,
        "evidence_turns_kept": ratio(evidence, n_evidence),
        "pleasantries": n_other,
        "pleasantries_rejected": ratio(n_other - other, n_other),
    }


# How a turn reaches memwarden: its text alone; after its speaker's name; and its text with the turn
# before it known — what memwarden sees when a conversation is retained turn by turn into a bank
# (governance/turns.py remembers the question a reply may answer).
TURN_FORMS: tuple[tuple[str, Callable[[Turn], str]], ...] = (
    ("text", lambda t: t.text),
    ("Speaker: text", lambda t: f"{t.speaker}: {t.text}"),
    ("text, the turn before known", lambda t: t.text),
)


def judgement(pipeline: Pipeline, only: frozenset[str] | None = None) -> dict[str, Any]:
    """Every item and turn set judged (``only``: the sets named there)."""
    item_rows, pairs = [], {"tune": [], "eval": []}  # type: ignore[var-annotated]
    for name in (n for n in ITEM_SETS if only is None or n in only):
        cases = items(name)
        judged = judge_all(pipeline, [c.text for c in cases])
        for split in ("tune", "eval"):
            idx = [i for i, c in enumerate(cases) if c.split == split]
            item_rows.append(item_scores(name, split, [cases[i] for i in idx], [judged[i] for i in idx]))
            pairs[split] += [
                (cases[i].topic, judged[i].topic)
                for i in idx
                if cases[i].keep and cases[i].topic and judged[i].verdict != "reject"
            ]
    turn_rows = []
    for name in (n for n in TURN_SETS if only is None or n in only):
        turns = turns_of(name)
        for form, render in TURN_FORMS:
            judged = judge_all(
                pipeline, [render(t) for t in turns], [t.before for t in turns] if "before" in form else None
            )
            for split in ("tune", "eval"):
                idx = [i for i, t in enumerate(turns) if t.split == split]
                turn_rows.append(turn_scores(name, split, [turns[i] for i in idx], [judged[i] for i in idx], form))
    return {
        "items": item_rows,
        "turns": turn_rows,
        "confusion": {split: confusion(p) for split, p in pairs.items()},  # type: ignore[arg-type]
    }


def fmt(v: object) -> str:
    return "—" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def print_judgement(result: dict[str, Any]) -> None:
    cols = ["facts", "facts_kept", "noise", "noise_rejected", "topic_accuracy"]
    cols += ["people_in_engineering", "engineering_in_personal"]
    cells = [[r["set"], r["split"], *(fmt(r[c]) for c in cols)] for r in result["items"]]
    print(markdown_table(["item set", "split", *cols], cells))
    print()
    cols = ["turns", "fact_turns", "fact_turns_kept", "evidence_turns", "evidence_turns_kept"]
    cols += ["pleasantries", "pleasantries_rejected"]
    cells = [[r["set"], r["split"], r["form"], *(fmt(r[c]) for c in cols)] for r in result["turns"]]
    print(markdown_table(["per-turn set", "split", "item", *cols], cells))
    for split, table in result["confusion"].items():
        print(f"\ntopic confusion, {split} (rows: the writer's topic; columns: memwarden's)\n")
        print(markdown_table(["topic", *TOPICS, "accuracy"], table))


def retrieval_sets(embedder: str, only: frozenset[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in (n for n in RETRIEVAL_SETS if only is None or n in only):
        conversations, questions = load_questions(name)
        retrieval.plain_bm25(conversations, questions)
        latency = asyncio.run(retrieval.store_runs(conversations, questions, embedder))
        out[name] = {"strata": strata(questions), "latency": latency_summary(latency)}
    return out


@dataclass
class Asked(retrieval.Question):
    split: str = "tune"
    wording: str | None = None


def load_questions(name: str) -> tuple[list[dict[str, Any]], list[Asked]]:
    data = rows(name)
    conversations = [r for r in data if r["type"] == "conversation"]
    split_of = {c["conv"]: conversation_split(c) for c in conversations}
    said = {i: t for c in conversations for i, t, _ in retrieval.turns(c)}
    questions = []
    for r in data:
        if r["type"] != "question":
            continue
        evidence = {w for e in r["evidence"] for w in retrieval.terms(said[e])}
        content = {w for w in retrieval.terms(r["question"]) if not retrieval.is_stopword(w)}
        questions.append(
            Asked(
                r["conv"],
                r["lang"],
                r["kind"],
                r["question"],
                set(r["evidence"]),
                overlap=len(content & evidence),
                split=split_of[r["conv"]],
                wording=r.get("wording"),
            )
        )
    return conversations, questions


SYSTEMS = ("keyword", "semantic", "fused", "plain BM25")
STRATA: dict[str, Callable[[Asked], bool]] = {
    "all": lambda q: True,
    "en": lambda q: q.lang == "en",
    "zh": lambda q: q.lang == "zh",
    "mixed": lambda q: q.lang == "mixed",
    "worded like the answer (writer)": lambda q: q.wording == "reused",
    "paraphrased (writer)": lambda q: q.wording == "paraphrased",
    "shares ≤ 1 content term": lambda q: q.overlap <= 1,
    "shares ≥ 2 content terms": lambda q: q.overlap >= 2,
    "temporal": lambda q: q.kind == "temporal",
    "multi-hop": lambda q: q.kind == "multi",
}


def strata(questions: list[Asked]) -> list[dict[str, Any]]:
    out = []
    for split in ("tune", "eval"):
        for stratum, test in STRATA.items():
            sub = [q for q in questions if q.split == split and test(q)]
            if not sub:
                continue
            scored = {s: retrieval.scores(sub, s) for s in SYSTEMS}
            best_arm = max(scored["keyword"]["R@5"], scored["semantic"]["R@5"])
            out.append(
                {
                    "split": split,
                    "stratum": stratum,
                    "questions": len(sub),
                    **{f"{s} R@5": scored[s]["R@5"] for s in SYSTEMS},
                    **{f"{s} R@10": scored[s]["R@10"] for s in SYSTEMS},
                    "margin": round(scored["fused"]["R@5"] - best_arm, 3),
                }
            )
    return out


def latency_summary(latency: dict[str, list[float]]) -> dict[str, float]:
    fused = sorted(latency.get("fused", []))
    return {"fused_p50_ms": round(fused[len(fused) // 2], 1)} if fused else {}


def print_retrieval(result: dict[str, Any]) -> None:
    if not result:  # (--sets named no retrieval set)
        return
    for name, got in result.items():
        print(f"\nretrieval: {name} (recall p50 {got['latency'].get('fused_p50_ms', '—')} ms)\n")
        head = ["split", "stratum", "questions", *(f"{s} R@5" for s in SYSTEMS), "fused R@10", "margin"]
        cells = [
            [
                r["split"],
                r["stratum"],
                r["questions"],
                *(f"{r[f'{s} R@5']:.3f}" for s in SYSTEMS),
                f"{r['fused R@10']:.3f}",
                f"{r['margin']:+.3f}",
            ]
            for r in got["strata"]
        ]
        print(markdown_table(head, cells))
    worst = min((r["margin"], name, r["split"], r["stratum"]) for name, got in result.items() for r in got["strata"])
    print(f"\nworst fusion margin (fused R@5 − the better arm's): {worst[0]:+.3f} ({worst[1]}, {worst[2]}, {worst[3]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    parser.add_argument("--embedder", default="e5", choices=["e5", "hashing"])
    parser.add_argument("--skip-judgement", action="store_true")
    parser.add_argument("--skip-retrieval", action="store_true")
    parser.add_argument("--rules-only", action="store_true", help="judge without the learned layer")
    parser.add_argument("--sets", help="only these sets (comma-separated names, e.g. chat_personal5,chat_zh5)")
    args = parser.parse_args()
    only = None if args.sets is None else frozenset(n.strip() for n in args.sets.split(",") if n.strip())
    if only is not None and not only:
        parser.error("--sets names no set")
    if only is not None and (unknown := only - {*ITEM_SETS, *TURN_SETS, *RETRIEVAL_SETS}):
        parser.error(f"no such set: {', '.join(sorted(unknown))}")
    print(f"machine: {machine()}\n")
    result: dict[str, Any] = {"machine": machine(), "sets": "all" if only is None else sorted(only)}
    if not args.skip_judgement:
        if args.rules_only:
            pipeline = build_pipeline(GovernanceSettings(), LabelsSettings(learned="off"))  # type: ignore[call-arg]
        else:
            from memwarden.store.embedder import E5Embedder

            pipeline = build_pipeline(GovernanceSettings(), LabelsSettings(), E5Embedder())  # type: ignore[call-arg]
        result["judgement"] = judgement(pipeline, only)
        print_judgement(result["judgement"])
    if not args.skip_retrieval:
        result["retrieval"] = retrieval_sets(args.embedder, only)
        print_retrieval(result["retrieval"])
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
