"""Secret detection: precision and recall of ``policies/secrets.py`` (with
``policies/secret_cues.py``), per language and overall, on every labelled set (``--data FILE``:
one set alone), and the time per text:

* ``secrets_tune.jsonl`` … ``secrets_tune12.jsonl`` — what the detectors were tuned on (the second
  to twelfth written for issue #33 by writers who saw no detector: chat, agent notes, shell, dotenv,
  logs, group chats, to-dos; e-mails, meetings, code, configs, tickets, call transcripts; spoken and
  spelled passwords, PINs, door and safe codes, passphrases; forum posts, SMS, network configs;
  everyday English with typos, sticky notes, seed phrases; machines' logs and configs; people's
  speech-to-text, parcel lockers and landlords; what an agent's memory is fed; tradespeople, carers,
  holiday hosts and call transcripts; traditional Chinese, Cantonese, 东北 voices and 语音转文字);
* ``secrets_tune13.jsonl`` … ``secrets_tune18.jsonl`` — 280 each, by six more writers who saw no
  detector (small businesses' e-mails and notes; developers in a hurry; Chinese customer service,
  shops and schools; people's own dictated notes; an IT helpdesk; Chinese everyday apps), and
  ``secrets_tune19.jsonl`` … ``secrets_tune22.jsonl`` (speech: calls, voicemail, dictation; office
  documents; machines' configs and logs; Chinese public services and elders' voice messages), and
  ``secrets_tune23.jsonl``/``secrets_tune24.jsonl`` (a secret hidden in prose; an agent's own notes
  and tool results), ``secrets_tune25.jsonl`` … ``secrets_tune27.jsonl`` (gamers, crypto and smart
  homes; Chinese developers, offices, students and parents; letters, wills, diaries and voice memos),
  ``secrets_tune28.jsonl`` … ``secrets_tune30.jsonl`` (agencies and schools; travel and hospitality;
  health and money), ``secrets_tune31.jsonl``/``secrets_tune32.jsonl`` (the working floor: warehouses,
  trucking, guards' logs; home tech and family accounts), ``secrets_tune33.jsonl`` (sport and leisure
  clubs, 健身房 and 羽毛球群) and ``secrets_tune34.jsonl`` (180: labs, HPC and embedded engineers,
  实验室群 and 课题组; its English secrets were overwritten by another writer's script and are left
  out: 99 English look-alikes and one secret): their misses and false positives were read and detectors written for them;
* ``secrets_heldout.jsonl`` — 320 texts written apart from the rules; never tuned on until issue
  #33's second session, when its false positives were read (reported as "read", no longer held out);
* ``secrets_heldout2.jsonl`` … ``secrets_heldout6.jsonl`` — 240 texts each by writers who saw no
  detector and no other set, scored but never read: the held-out numbers (the sixth new in #33's
  third session, scored at the end of each of its three rounds);
* ``secrets_heldout7.jsonl`` — 300 texts (150 English, 120 Chinese, 30 mixed) by a later writer,
  scored at the end of #33's third and fourth sessions, never read;
* ``secrets_heldout8.jsonl`` — 300 texts (150 English, 90 Chinese, 60 mixed) by a writer of #33's
  fourth round, scored blind at its start and after its rules, never read;
* ``secrets_heldout9.jsonl`` — 300 texts (150 English, 90 Chinese, 60 mixed), a fifth round's:
  scored blind at its start and after its rules, never read;
* ``secrets_heldout10.jsonl`` — 300 texts (150 English, 100 Chinese, 50 mixed), written during the
  fifth round and scored at the end of it and of the sixth, never read;
* ``secrets_heldout11.jsonl`` — 300 texts (160 English, 90 Chinese, 50 mixed), written during the
  sixth round and scored at its end and the seventh's, never read;
* ``secrets_heldout12.jsonl`` — 300 texts (160 English, 90 Chinese, 50 mixed) by an eighth round's
  writer: scored blind at its start and after its rules, never read;
* ``secrets_heldout13.jsonl`` — 280 texts (200 English, 40 Chinese, 40 mixed) by a ninth round's
  writer: scored blind at its start and after its rules, never read;
* ``secrets_heldout14.jsonl`` — 280 texts (200 English, 40 Chinese, 40 mixed) by a tenth round's
  writer who chose the settings: scored blind at its start and after its rules (one of its texts
  was printed once by a search of the repository, and not used);
* ``secrets_heldout15.jsonl`` — 280 texts (200 English, 40 Chinese, 40 mixed) by an eleventh round's
  writer who chose the settings: scored blind at its start and after its rules, never read.

``--hostile``: instead, the time to read a 100-KB text (and a 1-MB one) made of one look's words
repeated — what a request built against the detectors would cost.

Usage: python -m bench.secret_quality [--json FILE] [--misses] [--data FILE] [--hostile]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench.harness import machine, markdown_table, write_json
from memwarden.policies.secrets import find_secrets

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SETS = (
    ("secrets_tune", "tune"),
    ("secrets_tune2", "tune"),
    ("secrets_tune3", "tune"),
    ("secrets_tune4", "tune"),
    ("secrets_tune5", "tune"),
    ("secrets_tune6", "tune"),
    ("secrets_tune7", "tune"),
    ("secrets_tune8", "tune"),
    ("secrets_tune9", "tune"),
    ("secrets_tune10", "tune"),
    ("secrets_tune11", "tune"),
    ("secrets_tune12", "tune"),
    ("secrets_tune13", "tune"),
    ("secrets_tune14", "tune"),
    ("secrets_tune15", "tune"),
    ("secrets_tune16", "tune"),
    ("secrets_tune17", "tune"),
    ("secrets_tune18", "tune"),
    ("secrets_tune19", "tune"),
    ("secrets_tune20", "tune"),
    ("secrets_tune21", "tune"),
    ("secrets_tune22", "tune"),
    ("secrets_tune23", "tune"),
    ("secrets_tune24", "tune"),
    ("secrets_tune25", "tune"),
    ("secrets_tune26", "tune"),
    ("secrets_tune27", "tune"),
    ("secrets_tune28", "tune"),
    ("secrets_tune29", "tune"),
    ("secrets_tune30", "tune"),
    ("secrets_tune31", "tune"),
    ("secrets_tune32", "tune"),
    ("secrets_tune33", "tune"),
    ("secrets_tune34", "tune"),
    ("secrets_heldout", "read"),
    ("secrets_heldout2", "held out"),
    ("secrets_heldout3", "held out"),
    ("secrets_heldout4", "held out"),
    ("secrets_heldout5", "held out"),
    ("secrets_heldout6", "held out (final detectors only)"),
    ("secrets_heldout7", "held out (scored at a session's end)"),
    ("secrets_heldout8", "held out (scored blind, then after)"),
    ("secrets_heldout9", "held out (scored blind, then after)"),
    ("secrets_heldout10", "held out (scored at the end of each round)"),
    ("secrets_heldout11", "held out (scored at the end of the sixth round and the seventh)"),
    ("secrets_heldout12", "held out (scored blind, then after)"),
    ("secrets_heldout13", "held out (scored blind, then after)"),
    ("secrets_heldout14", "held out (scored blind, then after)"),
    ("secrets_heldout15", "held out (scored blind, then after)"),
)


def score(rows: list[dict[str, object]]) -> dict[str, float]:
    tp = sum(1 for r in rows if r["secret"] and r["found"])
    fp = sum(1 for r in rows if not r["secret"] and r["found"])
    fn = sum(1 for r in rows if r["secret"] and not r["found"])
    tn = len(rows) - tp - fp - fn
    return {
        "texts": len(rows),
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "accuracy": (tp + tn) / len(rows) if rows else 1.0,
        "false_positives": fp,
        "misses": fn,
    }


def evaluate(rows: list[dict[str, object]]) -> tuple[dict[str, dict[str, float]], float]:
    """Scores per language and overall, and the time per text in µs."""
    started = time.perf_counter()
    for row in rows:
        row["found"] = bool(find_secrets(str(row["text"])))
    per_text_us = (time.perf_counter() - started) / len(rows) * 1e6
    groups = {"all": rows, **{lang: [r for r in rows if r["lang"] == lang] for lang in ("en", "zh", "mixed")}}
    return {name: score(group) for name, group in groups.items() if group}, per_text_us


# What the look sees once at the start, before the repeated units: one name, then a run of spaces
# (a review found two names and digits said read from every space).
HOSTILE_START = {
    "a password, then spaces": "password X_PASSWORD",
    "a password's name, then spaces, then x": "password ",
    "PINs, then spaces": "pin 1234 " * 64,
    "a backup code, then spaces": "backup code ",
    "a spoken digit, then dots": "the PIN is one",
    "a login, then spaces, then pass": "user: bob",
    "an address, then tabs, then pass": "a@b.cc",
}
# One unit of each look, repeated to the size measured: a cue with no value, a value with no cue, a
# finding every few words (each finding costs its own look).
HOSTILE = {
    "a bare code that just came": "the code that just came through is ",
    "one-time codes after code's": "code's 774 019 ",
    "PINs listed by whose": "my pins Monzo 1234, Barclays 5678, ",
    "a login, then pass": "user bob / pass Zoro_was_best_9 ",
    "a login by comma": "login: bobby, Harvest-Gold-58 ",
    "numbers said in pairs": "sixty-one, ninety-nine, oh four, ",
    "speech recognition's digits": "the code is for to won oh ",
    "digits said alone": "one two ",
    "a key with no value": "key ",
    "what a Wi-Fi is": "the wifi at home is ",
    "security answers": "security question 'mother's maiden name' = Tremaine, ",
    "答案": "密保答案：张三 ",
    "a card read aloud": "card four nine one two, three three oh eight, ",
    "a dial's turns by comma": "keysafe turn to 1, 2, 3, 4, ",
    "an LDAP tool's -w": "ldapsearch -w ",
    "an example's value": "比如abc123这种 密码 ",
    "an OpenVPN key unended": "-----BEGIN OpenVPN Static key V1-----\n",
    "press, then pound": "star 1 2 3 4 ",
    # found by a review: one value made of the same character, a name repeated with no value
    "a directive's value of braces": "password 0 " + "{" * 200,
    "a cookie's value of braces": "cookie: a=" + "{" * 200,
    "htpasswd's flags": "htpasswd -" + "b" * 200,
    "ldap, again and again": "ldap ",
    "a quoted password key": "'" + "password" * 20,
    "a code, then PINs": "code: PIN PIN PIN ",
    "a speaker's false starts": "The PIN is sixty... ",
    "a lock, then digits in prose": "the box by the bins, the one with the dials. it wants 1-9-4-7. ",
    "a lock's word, again and again": "lock ",
    "门禁 then digits": "楼下门禁换了，新的是3916再按井号。",
    # an eighth round's looks, and what its review built against them
    "a key's setup, again and again": "mfa setup key ",
    "a backup key of words": "authenticator backup key abcd ",
    "rcon, then -p at the end": "rcon ",
    "a token's name, then =": "token.x=",
    "密钥的是": "密钥的是",
    "a password of dashed words": "password is ab-cd-",
    "a backup code, dashed": "backup code a1-",
    "an emergency code is": "emergency code is ",
    "redis-cli, then -a at the end": "redis-cli ",
    "so, after a PIN": "pin so 4471, ",
    "it's now, after a login": "admin, it's now ",
    "/login": "/login ",
    "a secret a few words before is": "secret a b c d is ",
    "seed words listed": "wallet words: ribbon, ",
    "I put, after a question": "first pet — I put ",
    # a ninth round's looks
    "a spoken digit, then dots": ".",
    "an address, then pass": "a@b.cc, pass Zx!9 ",
    "u:, then p:": "u: bob  p: Zx!9 ",
    "same as, but, so": "same as the old one but with a 9, so Orchard!9 ",
    "is literally still now": "password is literally still now ",
    "a security word's 's": "security word on Dad's ",
    "I said, after a question": "favourite teacher — I said ",
    "no password, then a password": "不用密码，密码是 ",
    # the tenth round's looks
    "an address, then a word": "a@b.cc  word ",
    "wifi, then a key": "wifi x, key ",
    "a logins heading, then lines": "logins\nGmail – x\n",
    "says, then digits": "the bank says 12 ",
    "a door and code table's rows": "| Door | Code |\n| x | y |\n",
    "the code word is": "the code word is ",
    # a review's: spaces or tabs between a login and "pass"
    "a login, then spaces, then pass": " ",
    "an address, then tabs, then pass": "\t",
    **dict.fromkeys(HOSTILE_START, " "),
}
# What the look waits for at the end of the text (one occurrence, after the repeated units).
HOSTILE_END = {
    "rcon, then -p at the end": " -p",
    "redis-cli, then -a at the end": " -a ",
    "a password, then spaces": "'abcdef'",
    "a password's name, then spaces, then x": "x",
    "PINs, then spaces": "x",
    "a backup code, then spaces": "x",
    "a spoken digit, then dots": " two",
    "a login, then spaces, then pass": "x pass",
    "an address, then tabs, then pass": "x pass",
}


def hostile(sizes: tuple[int, ...] = (100_000, 1_000_000)) -> list[list[object]]:
    rows: list[list[object]] = []
    for name, unit in HOSTILE.items():
        row: list[object] = [name]
        for size in sizes:
            text = HOSTILE_START.get(name, "") + (unit * (size // len(unit) + 1))[:size] + HOSTILE_END.get(name, "")
            started = time.perf_counter()
            found = find_secrets(text)
            row += [f"{time.perf_counter() - started:.3f}", len(found)]
        rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON here")
    parser.add_argument("--misses", action="store_true", help="print the texts judged wrongly")
    parser.add_argument("--data", type=Path, help="one labelled set (JSON lines) instead of every set")
    parser.add_argument("--hostile", action="store_true", help="time texts built against the detectors instead")
    args = parser.parse_args()
    if args.hostile:
        print(f"\nMachine: {machine()}.\n")
        print(markdown_table(["text made of", "100 KB (s)", "findings", "1 MB (s)", "findings"], hostile()))
        return 0
    sets = [(args.data, "given")] if args.data else [(DATA / f"{n}.jsonl", kind) for n, kind in SETS]
    cells = []
    result: dict[str, object] = {"machine": machine(), "sets": {}}
    for path, kind in sets:
        if not path.exists():
            continue
        rows: list[dict[str, object]] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        scores, per_text_us = evaluate(rows)
        result["sets"][path.stem] = {"kind": kind, "per_text_us": per_text_us, "scores": scores}  # type: ignore[index]
        for name, s in scores.items():
            cells.append(
                [
                    path.stem,
                    kind,
                    name,
                    s["texts"],
                    f"{s['precision']:.3f}",
                    f"{s['recall']:.3f}",
                    f"{s['accuracy']:.3f}",
                    s["false_positives"],
                    s["misses"],
                ]
            )
        if args.misses:
            for row in rows:
                if bool(row["secret"]) != bool(row["found"]):
                    what = "MISS" if row["secret"] else "FP  "
                    print(f"{what} {path.stem} [{row['style']}] {str(row['text'])[:140]!r}", file=sys.stderr)
    print(f"\nMachine: {machine()}.\n")
    head = ["set", "kind", "texts", "n", "precision", "recall", "accuracy", "false positives", "misses"]
    print(markdown_table(head, cells))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
