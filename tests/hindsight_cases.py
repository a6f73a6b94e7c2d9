"""Bad input, and what the real Hindsight 1.1.0 answers to it: one table for every backend.

``tests/interop/test_contract.py`` sends each request to every backend in its ``BACKENDS`` (the
self-hosted store, the real Hindsight), bare and with memwarden in front, and expects the answer
written here; the real server's row keeps the table true to Hindsight. Run in order on one bank:
some steps depend on the ones before (the memory is archived, then edited). ``{bank}`` and
``{mid}`` (the id of the memory about Bob) are filled in per server.
"""

from __future__ import annotations

from typing import Any

import httpx

SEED = [
    {"content": "Alice prefers dark roast coffee.", "tags": ["user:alice", "Team_A"], "document_id": "d1"},
    {"content": "Bob moved the deploy to Friday.", "tags": ["user:bob"], "document_id": "d2"},
]
B = "/v1/default/banks/{bank}"
PATCH_MID = ("PATCH", f"{B}/memories/{{mid}}")
RECALL = ("POST", f"{B}/memories/recall")
CONFIG = ("PATCH", f"{B}/config")
INVALID_AT = "Invalid timestamp/event_date format: 'bad'."

# The one case governance answers on purpose unlike Hindsight: the blank item gets the
# ``content.empty`` verdict and its batch goes on (200), where Hindsight refuses the request.
BLANK_ITEM = ("POST", f"{B}/memories", {"items": [{"content": "  "}]})

# (method, path, JSON body or None, status, detail): a string detail is compared whole, a Prefix by
# its start and end; a tuple is (the start of loc, the start of msg) of the first error of a FastAPI
# 422 list, a list of such tuples is every error of it in order.


class Prefix(str):
    """A detail compared by its start (and ``...`` at its end): Hindsight names ten of its valid
    config fields, picked from a set, so which ten varies from one server process to the next."""


CASES: list[tuple[str, str, Any, int, Any]] = [
    (*RECALL, {"query": ""}, 422, (["body", "query"], "Value error, query must contain at least one word")),
    (*RECALL, {"query": " ?! "}, 422, (["body", "query"], "Value error, query must contain at least one word")),
    (
        *RECALL,
        {"query": "coffee", "types": ["bogus"]},
        422,
        "Invalid fact type(s): bogus. Must be one of: experience, observation, world",
    ),
    (
        *RECALL,
        {"query": "coffee", "query_timestamp": "soon"},
        400,
        "Invalid query_timestamp format. Expected ISO "
        "format (e.g., '2023-05-30T23:40:00'): Invalid isoformat string: 'soon'",
    ),
    (
        *RECALL,
        {"query": "coffee", "tags": ["user:bob"], "tag_groups": []},
        422,
        (["body"], "Value error, 'tags' and 'tag_groups' are mutually exclusive"),
    ),
    (*RECALL, {"query": "coffee", "tag_groups": [{"bogus": 1}]}, 422, (["body", "tag_groups"], "")),
    # A bank's transfer (export, import): the refusals before any archive is read.
    (
        "POST",
        f"{B}/transfer/export?include_data=false&include_bank_config=0",
        None,
        400,
        "Nothing to export: set at least one of include_data, include_bank_config, include_history",
    ),
    ("POST", f"{B}/transfer/export?include_data=maybe", None, 422, (["query", "include_data"], "Input should be")),
    (
        "POST",
        f"{B}/transfer/export?document_id=d1",
        None,
        400,
        "include_bank_config and include_history are only supported for a whole-bank export (omit document_id)",
    ),
    (
        "POST",
        f"{B}/document-transfer/export?document_id=d1&include_observations=true",
        None,
        400,
        "include_observations and include_knowledge_base are only supported when exporting the whole bank "
        "(omit document_id)",
    ),
    ("POST", f"{B}/transfer/import?mode=merge", {"file": "x"}, 422, [(["body", "file"], "Field required")]),
    (
        "POST",
        f"{B}/transfer/import?include_history=2",
        None,
        422,
        [(["query", "include_history"], "Input should be"), (["body", "file"], "Field required")],
    ),
    (*BLANK_ITEM, 422, (["body", "items", 0, "content"], "Value error, content cannot be empty")),
    (
        "POST",
        f"{B}/memories",
        {"items": [{"content": "Carol likes tea.", "timestamp": "bad"}]},
        422,
        (["body", "items", 0, "timestamp"], f"Value error, {INVALID_AT}"),
    ),
    (
        "POST",
        f"{B}/memories",
        {"items": [{"content": "Carol likes tea.", "timestamp": "0001-01-01"}]},
        422,
        (["body", "items", 0, "timestamp"], "Value error, timestamp year 1 is a placeholder"),
    ),
    (
        "POST",
        f"{B}/memories",
        {"items": [{"content": "Carol likes tea.", "metadata": {"n": 1}}]},
        422,
        (["body", "items", 0, "metadata", "n"], "Input should be a valid string"),
    ),
    (
        "POST",
        f"{B}/memories",
        {"items": [{"content": "Carol likes tea.", "context": 5}]},
        422,
        (["body", "items", 0, "context"], "Input should be a valid string"),
    ),
    (*CONFIG, {"updates": {"retain_mission": 5}}, 400, "retain_mission must be a string, got int"),
    (*CONFIG, {"updates": {"retain_chunk_size": "big"}}, 400, "retain_chunk_size must be an integer, got str"),
    (*CONFIG, {"updates": {"enable_observations": 1}}, 400, "enable_observations must be a boolean, got int"),
    (
        *CONFIG,
        {"updates": {"disposition_empathy": 9}},
        400,
        "disposition_empathy must be an integer between 1 and 5, got 9",
    ),
    (*CONFIG, {"updates": {"disposition_empathy": True}}, 400, "disposition_empathy must be an integer, got bool"),
    (
        *CONFIG,
        {"updates": {"recall_budget_fixed_mid": -5}},
        400,
        "recall_budget_fixed_mid must be a positive integer, got -5",
    ),
    (
        *CONFIG,
        {"updates": {"recall_budget_adaptive_low": 0}},
        400,
        "recall_budget_adaptive_low must be a positive number, got 0",
    ),
    (
        *CONFIG,
        {"updates": {"recall_budget_function": "nope"}},
        400,
        "recall_budget_function must be one of ['adaptive', 'fixed'], got 'nope'",
    ),
    (
        *CONFIG,
        {"updates": {"recall_budget_min": 50, "recall_budget_max": 10}},
        400,
        "recall_budget_min (50) must be <= recall_budget_max (10)",
    ),
    (
        *CONFIG,
        {"updates": {"recall_budget_min": 5000}},
        400,
        "recall_budget_min (5000) must be <= recall_budget_max (2000)",
    ),
    (
        *CONFIG,
        {"updates": {"consolidation_strategies": [{"scope": ["a"]}]}},
        400,
        "Invalid consolidation strategy at index 0: scope: Extra inputs are not permitted",
    ),
    (
        *CONFIG,
        {"updates": {"retain_strategies": {"": {}}}},
        400,
        "Strategy names must not be empty strings. Remove entries with empty names before saving.",
    ),
    (
        *CONFIG,
        {"updates": {"retain_strategies": {"fast": 5}}},
        400,
        "Invalid retain strategy 'fast': must be an object",
    ),
    (
        *CONFIG,
        {"updates": {"retain_strategies": {"fast": {"retain_chunk_size": "x"}}}},
        400,
        "Invalid retain strategy 'fast': retain_chunk_size must be an integer, got str",
    ),
    ("PUT", "/v1/default/banks/" + "y" * 193, {}, 400, "Bank id is too long: at most 192 bytes of UTF-8 are allowed"),
    ("PUT", "/v1/default/banks/_{bank}", {}, 400, "Bank id must not start with '_': that prefix is reserved"),
    (
        "POST",
        "/v1/default/banks/_{bank}/memories",
        {"items": [{"content": "Dan likes tea."}]},
        400,
        "Bank id must not start with '_': that prefix is reserved",
    ),
    (
        "PUT",
        "/v1/default/banks/{bank}",
        {"disposition": {"empathy": 4}},
        422,
        (["body", "disposition", "skepticism"], "Field required"),
    ),
    ("PUT", "/v1/default/banks/{bank}", {"name": 5}, 422, (["body", "name"], "Input should be a valid string")),
    (
        "PUT",
        "/v1/default/banks/{bank}",
        {"disposition_literalism": 0},
        422,
        (["body", "disposition_literalism"], "Input should be greater than or equal to 1"),
    ),
    ("GET", f"{B}/memories/not-a-uuid", None, 400, "Invalid memory_id: 'not-a-uuid' is not a valid UUID"),
    (*PATCH_MID, {}, 422, (["body"], "Value error, Provide at least one field to update.")),
    (*PATCH_MID, {"state": "gone"}, 422, (["body"], "Value error, state must be 'valid' or 'invalidated'.")),
    (
        *PATCH_MID,
        {"fact_type": "observation"},
        422,
        (["body"], "Value error, fact_type must be 'world' or 'experience'."),
    ),
    (*PATCH_MID, {"text": "  "}, 400, "text must not be empty."),
    (
        *PATCH_MID,
        {"occurred_start": "9999-12-31"},
        400,
        "Date year 9999 is a placeholder, not a date; send '' to clear it.",
    ),
    (*PATCH_MID, {"state": "invalidated", "reason": "wrong"}, 200, None),
    ("GET", f"{B}/memories/{{mid}}", None, 200, None),  # archived, still there
    (
        *PATCH_MID,
        {"text": "Bob moved the deploy to Monday."},
        400,
        "Cannot edit an invalidated memory; revert it to 'valid' first.",
    ),
    (*PATCH_MID, {"entities": ["Bob"]}, 400, "Cannot edit an invalidated memory; revert it to 'valid' first."),
    (*PATCH_MID, {"state": "valid"}, 200, None),
    (
        "GET",
        f"{B}/memories/list?limit=-1",
        None,
        422,
        (["query", "limit"], "Input should be greater than or equal to 0"),
    ),
    ("GET", f"{B}/documents?offset=x", None, 422, (["query", "offset"], "Input should be a valid integer")),
    (
        "GET",
        f"{B}/memories/list?tags=a&tags_match=some",
        None,
        422,
        (["query", "tags_match"], "Input should be 'any', 'all', 'any_strict', 'all_strict' or 'exact'"),
    ),
    ("GET", f"{B}/operations/not-an-op", None, 400, "Invalid operation_id format: not-an-op"),
    ("PATCH", f"{B}/documents/d1", {}, 422, "At least one field (tags, observation_scopes) must be provided"),
    (*CONFIG, {"updates": "x"}, 422, (["body", "updates"], "Input should be a valid dictionary")),
    (
        *CONFIG,
        {"updates": {"bogus_field": 1}},
        400,
        Prefix("Unknown configuration fields: ['bogus_field']. Valid configurable fields: ['"),
    ),
    (
        "POST",
        f"{B}/memories",
        {"items": [{"content": 123}]},
        422,
        [
            (["body", "items", 0, "content", "str"], "Input should be a valid string"),
            (
                [
                    "body",
                    "items",
                    0,
                    "content",
                    "list[tagged-union[TextContentBlock,ImageContentBlock,FileContentBlock]]",
                ],
                "Input should be a valid list",
            ),
        ],
    ),
]

# Hindsight's routes beyond retain and recall, and its router's answers (unknown path, wrong method,
# retired routes: 1.1.0 answers the bank profile routes 410 once their body is valid).
PROFILE_GONE = (
    "The bank profile endpoints have been removed. Disposition traits and the reflect mission are bank "
    "configuration: read them from GET /v1/default/banks/{bank_id}/config as `disposition_skepticism`, "
    "`disposition_literalism`, `disposition_empathy` and `reflect_mission`, and write them with PATCH "
    "/v1/default/banks/{bank_id}/config. The `name` field this endpoint also returned was a display-only "
    "label; read it from GET /v1/default/banks."
)
BACKGROUND_GONE = (
    "The bank background endpoint has been removed. The background was folded into the reflect mission: "
    "write it with PATCH /v1/default/banks/{bank_id}/config as `reflect_mission`. That call replaces the "
    "value rather than merging into it, so read the current mission from GET "
    "/v1/default/banks/{bank_id}/config first if you relied on this endpoint's append behaviour."
)
ENTITY = "00000000-0000-4000-8000-000000000000"
DISPOSITION = {"disposition": {"skepticism": 3, "literalism": 3, "empathy": 3}}
AT_LEAST_1 = "Input should be greater than or equal to 1"
CASES += [
    ("GET", f"{B}/nope", None, 404, "Not Found"),
    ("GET", "/v1/default/nope/{bank}", None, 404, "Not Found"),
    ("POST", f"{B}/stats", {}, 405, "Method Not Allowed"),
    ("DELETE", f"{B}/profile", None, 405, "Method Not Allowed"),
    ("POST", f"{B}/documents/d1/chunks", {}, 405, "Method Not Allowed"),
    ("PUT", "/v1/default/banks", {}, 405, "Method Not Allowed"),
    ("GET", f"{B}/profile", None, 410, PROFILE_GONE),
    ("PUT", f"{B}/profile", DISPOSITION, 410, PROFILE_GONE),
    ("PUT", f"{B}/profile", {}, 422, (["body", "disposition"], "Field required")),
    ("POST", f"{B}/background", {"content": "x"}, 410, BACKGROUND_GONE),
    ("POST", f"{B}/background", {}, 422, (["body", "content"], "Field required")),
    (
        "POST",
        f"{B}/entities/{ENTITY}/regenerate",
        None,
        410,
        "This endpoint is deprecated. Entity observations are no longer supported.",
    ),
    ("GET", f"{B}/entities/not-a-uuid", None, 400, "Invalid entity_id: 'not-a-uuid' is not a valid UUID"),
    ("GET", f"{B}/entities/{ENTITY}", None, 404, f"Entity {ENTITY} not found"),
    ("GET", f"{B}/entities?limit=-1", None, 422, (["query", "limit"], "Input should be greater than or equal to 0")),
    ("GET", f"{B}/entities?tags_match=some", None, 422, (["query", "tags_match"], "Input should be 'any'")),
    (
        "GET",
        f"{B}/entities?tag_groups=bad",
        None,
        400,
        "Invalid tag_groups: [{'type': 'json_invalid', 'loc': (), 'msg': 'Invalid JSON: expected value at line 1"
        " column 1', 'input': 'bad', 'ctx': {'error': 'expected value at line 1 column 1'}}]",
    ),
    ("GET", f"{B}/entities?tag_groups=%5B%7B%22x%22%3A1%7D%5D", None, 400, None),  # not a tag group
    (
        "GET",
        f"{B}/entities?tags=x&tag_groups=%5B%5D",
        None,
        400,
        "'tags' and 'tag_groups' are mutually exclusive. Use 'tag_groups' for compound filtering.",
    ),
    ("GET", f"{B}/operations?limit=0", None, 422, (["query", "limit"], AT_LEAST_1)),
    ("GET", f"{B}/operations?limit=101", None, 422, (["query", "limit"], "Input should be less than or equal to 100")),
    ("GET", f"{B}/operations?exclude_parents=maybe", None, 422, (["query", "exclude_parents"], "Input should be a")),
    ("GET", f"{B}/documents/nope/chunks", None, 404, "Document not found"),
    ("GET", f"{B}/documents/d1/chunks?limit=0", None, 422, (["query", "limit"], AT_LEAST_1)),
    ("GET", f"{B}/documents/d1/history?limit=1001", None, 422, (["query", "limit"], "Input should be less than")),
    ("GET", "/v1/default/chunks/nope", None, 404, "Chunk not found"),
    (
        "POST",
        f"{B}/memories",
        {"items": [{"content": "Carol likes tea.", "entities": "Carol"}]},
        422,
        (["body", "items", 0, "entities"], "Input should be a valid list"),
    ),
    (
        "POST",
        f"{B}/memories",
        {"items": [{"content": "Carol likes tea.", "entities": [{"type": "person"}]}]},
        422,
        (["body", "items", 0, "entities", 0, "text"], "Field required"),
    ),
]
# The Allow header of the 405s above: the method of the first of Hindsight's routes the path matches.
ALLOW = {
    ("POST", f"{B}/stats"): "GET",
    ("DELETE", f"{B}/profile"): "GET",
    ("POST", f"{B}/documents/d1/chunks"): "GET",
    ("PUT", "/v1/default/banks"): "GET",
}

# The tag listing's wildcard and paging: which tags each query lists (Hindsight's counts also take in
# the observations it consolidates in the background, which memwarden does not make).
TAG_QUERIES = ["", "?q=user:*", "?q=USER:ALICE", "?q=team%5Fa", "?q=*a*", "?q=user", "?q=t__m*", "?limit=0"]


def seed(http: httpx.Client, bank: str) -> str:
    """The bank with SEED in it; the id of the memory about Bob."""
    http.put(f"/v1/default/banks/{bank}", json={}).raise_for_status()
    http.post(f"/v1/default/banks/{bank}/memories", json={"items": SEED}).raise_for_status()
    items = http.get(f"/v1/default/banks/{bank}/memories/list").json()["items"]
    return str(next(m["id"] for m in items if m["text"].startswith("Bob")))


def run_cases(http: httpx.Client, bank: str) -> list[str]:
    """Every case against one server; the differences from the table (empty: none)."""
    mid = seed(http, bank)
    problems = []
    for method, path, body, status, detail in CASES:
        target = path.format(bank=bank, mid=mid)
        r = http.request(method, target, json=body) if body is not None else http.request(method, target)
        where = f"{method} {path} {body}"
        if r.status_code != status:
            problems.append(f"{where}: {r.status_code} {r.text[:300]}")
            continue
        if (method, path) in ALLOW and r.headers.get("allow") != ALLOW[method, path]:
            problems.append(f"{where}: Allow {r.headers.get('allow')!r}")
        got = r.json().get("detail") if status >= 400 else None
        if isinstance(detail, Prefix):
            if not (isinstance(got, str) and got.startswith(detail) and got.endswith("]...")):
                problems.append(f"{where}: {got!r}")
        elif isinstance(detail, str) and got != detail:
            problems.append(f"{where}: {got!r}")
        elif isinstance(detail, tuple | list):
            errors = got if isinstance(got, list) else []
            wanted = [detail] if isinstance(detail, tuple) else detail
            if len(errors) < len(wanted) or (isinstance(detail, list) and len(errors) != len(wanted)):
                problems.append(f"{where}: {got!r}")
                continue
            for (loc, msg), error in zip(wanted, errors, strict=False):
                if error.get("loc", [])[: len(loc)] != loc or not str(error.get("msg", "")).startswith(msg):
                    problems.append(f"{where}: {got!r}")
                    break
    return problems


# memwarden in front of Mem0: the cases answered with a 501 because Mem0 cannot do what they ask —
# by (method, path) as in CASES, what Mem0 lacks. Every other case is answered as Hindsight answers it.
MEM0_GAPS: dict[tuple[str, str], str] = {
    **{(m, p): "bank and document transfer" for m, p, *_ in CASES if "/transfer/" in p or "/document-transfer/" in p},
    **{(m, p): "per-bank configuration" for m, p, *_ in CASES if (m, p) == CONFIG},
    **{(m, p): "memory states and edits" for m, p, *_ in CASES if (m, p) == PATCH_MID},
    **{(m, p): "operations" for m, p, *_ in CASES if "/operations" in p},
    **{(m, p): "entities" for m, p, *_ in CASES if "/entities" in p},
    **{(m, p): "chunks" for m, p, *_ in CASES if "chunks" in p},
    **{
        (m, p): "a document's history and tags"
        for m, p, *_ in CASES
        if p.startswith(f"{B}/documents/d1") and "chunks" not in p
    },
    **{
        (m, p): "the profile (retired in Hindsight 1.1.0)"
        for m, p, *_ in CASES
        if p.endswith(("/profile", "/background"))
    },
}


def only_gaps(problems: list[str], gaps: dict[tuple[str, str], str], backend: str) -> list[str]:
    """The problems that are not a declared gap answered with a 501 naming the backend (and not the
    blank item)."""
    method, path, body = BLANK_ITEM
    left = []
    for problem in problems:
        if problem.startswith(f"{method} {path} {body}: 200"):
            continue
        case = next((c for c in CASES if problem.startswith(f"{c[0]} {c[1]} {c[2]}: ")), None)
        answer = problem[len(f"{case[0]} {case[1]} {case[2]}: ") :] if case else ""
        if case and (case[0], case[1]) in gaps and answer.startswith("501 ") and f"in front of {backend}" in answer:
            continue
        left.append(problem)
    return left


def only_the_blank_item_differs(problems: list[str]) -> bool:
    """What ``run_cases`` finds through governance: the blank item answered ``200``, nothing else."""
    method, path, body = BLANK_ITEM
    return len(problems) == 1 and problems[0].startswith(f"{method} {path} {body}: 200")


def tag_listings(http: httpx.Client, bank: str) -> dict[str, Any]:
    http.post(f"/v1/default/banks/{bank}/memories", json={"items": SEED}).raise_for_status()
    out = {}
    for q in TAG_QUERIES:
        page = http.get(f"/v1/default/banks/{bank}/tags{q}").json()
        out[q] = (sorted(t["tag"] for t in page["items"]), page["total"], page["limit"], page["offset"])
    return out
