"""Hostile input answered 4xx, nothing written, the server serving: memwarden on loopback,
self-hosted and in front of the Hindsight stand-in. Each case is one an attacker tried (issue #21):
before, seven of them were 500s and five were stored."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.wire.asgi import parse_json
from testing.standin import running_standin
from tests.conftest import ledger_db, make_settings, running_warden
from tests.loopback.test_local_store import local_settings

FACT = "The staging cluster has 3 nodes with 16 GB RAM each."


def nested(depth: int) -> dict[str, Any]:
    group: dict[str, Any] = {"tags": ["user:a"]}
    for _ in range(depth):
        group = {"and": [group]}
    return group


# (name, method, path, keyword arguments for httpx, expected status, a word of the answer)
CASES: list[tuple[str, str, str, dict[str, Any], int, str]] = [
    (
        "JSON 100,000 deep on retain",
        "POST",
        "/v1/default/banks/h/memories",
        {"content": "[" * 100_000 + "]" * 100_000, "headers": {"content-type": "application/json"}},
        422,
        "json_too_deep",
    ),
    (
        "JSON 100,000 deep on recall",
        "POST",
        "/v1/default/banks/h/memories/recall",
        {"content": '{"a":' * 100_000 + "1" + "}" * 100_000, "headers": {"content-type": "application/json"}},
        422,
        "json_too_deep",
    ),
    (
        "JSON 70 deep in metadata",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": FACT, "entities": nested(35)}]}},
        422,
        "64 levels",
    ),
    (
        "tag_groups 20 deep",
        "POST",
        "/v1/default/banks/h/memories/recall",
        {"json": {"query": "x", "tag_groups": [nested(20)]}},
        400,
        "16 levels",
    ),
    (
        "tag_groups 5,000 wide",
        "POST",
        "/v1/default/banks/h/memories/recall",
        {"json": {"query": "x", "tag_groups": [{"or": [{"tags": [f"t{i}"]} for i in range(5000)]}]}},
        400,
        "1024",
    ),
    (
        "a 10,000-character tag in a filter",
        "POST",
        "/v1/default/banks/h/memories/recall",
        {"json": {"query": "x", "tags": ["x" * 10_000]}},
        400,
        "characters long",
    ),
    ("audit since past 64 bits", "GET", "/warden/v1/audit", {"params": {"since": "9" * 23}}, 422, "18 digits"),
    (
        "Last-Event-ID past 64 bits",
        "GET",
        "/warden/v1/audit/stream",
        {"headers": {"last-event-id": "9" * 23}},
        422,
        "sequence number",
    ),
    (
        "bank .. (%2e%2e)",
        "POST",
        "/v1/default/banks/%2e%2e/memories",
        {"json": {"items": [{"content": FACT}]}},
        400,
        "'..'",
    ),
    (
        "bank of one space",
        "POST",
        "/v1/default/banks/%20/memories",
        {"json": {"items": [{"content": FACT}]}},
        400,
        "whitespace",
    ),
    (
        "bank with U+202E",
        "POST",
        "/v1/default/banks/a%E2%80%AEb/memories",
        {"json": {"items": [{"content": FACT}]}},
        400,
        "bidirectional",
    ),
    (
        "a header value that is not ASCII (a list, passed through)",
        "GET",
        "/v1/default/banks/h/memories/list",
        {"headers": {"user-agent": "数据库的密码是 hunter2".encode()}},
        400,
        "must be ASCII",
    ),
    (
        "a Latin-1 Accept-Language on a bank's stats",
        "GET",
        "/v1/default/banks/h/stats",
        {"headers": {"accept-language": "é".encode("latin-1")}},
        400,
        "must be ASCII",
    ),
    *(
        (
            f"{name} past PostgreSQL's integer on {path.rsplit('/', 1)[1]}",
            "GET",
            f"/v1/default/banks/h/{path.rsplit('/', 1)[1]}?{name}=99999999999999999999999",
            {},
            422,
            "less than or equal to 2147483647",
        )
        for name in ("limit", "offset")
        for path in ("/memories/list", "/documents", "/tags", "/entities", "/operations")
    ),
    (
        "700,000 items: counted before anything parses them",
        "POST",
        "/v1/default/banks/h/memories",
        {
            "content": b'{"items": [' + b",".join([b'{"content": "x"}'] * 700_000) + b"]}",
            "headers": {"content-type": "application/json"},
        },
        413,
        "JSON body holds more than 200,000 values",
    ),
    (
        "100,000 tags on one item",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": FACT, "tags": ["t"] * 100_000}]}},
        422,
        "At most 64 tags per item",
    ),
    (
        "65 document tags",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": FACT}], "document_tags": [f"t{i}" for i in range(65)]}},
        422,
        "At most 64 tags on a request",
    ),
    (
        "more text in all than one request may ask the judge to read",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": "The cache has four shards. " * 26_000} for _ in range(3)]}},
        413,
        "more than 1000000 characters in all",
    ),
    (
        "bank named like a key scope's wildcard",
        "POST",
        "/v1/default/banks/team%2A/memories",
        {"json": {"items": [{"content": FACT}]}},
        400,
        "wildcard",
    ),
    (
        "bank named '*'",
        "PUT",
        "/v1/default/banks/*",
        {"json": {}},
        400,
        "wildcard",
    ),
    (
        "bank of lossy bytes",
        "POST",
        "/v1/default/banks/%ff%fe/memories",
        {"json": {"items": [{"content": FACT}]}},
        400,
        "UTF-8",
    ),
    (
        "bank with a newline",
        "POST",
        "/v1/default/banks/a%0Ab/memories",
        {"json": {"items": [{"content": FACT}]}},
        400,
        "control characters",
    ),
    ("bank with a newline, admin API", "GET", "/warden/v1/banks/a%0Ab/memories", {}, 400, "control characters"),
    # Invisible characters: a bank that lists and logs exactly like another one.
    (
        "bank with a zero-width space",
        "POST",
        "/v1/default/banks/Case%E2%80%8BBank/memories",
        {"json": {"items": [{"content": FACT}]}},
        400,
        "invisible characters",
    ),
    ("bank with a soft hyphen", "PUT", "/v1/default/banks/Case%C2%ADBank", {"json": {}}, 400, "invisible characters"),
    ("bank of 200 bytes", "PUT", f"/v1/default/banks/{'b' * 200}", {"json": {}}, 400, "too long"),
    (
        "a 1 MiB tag",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": FACT, "tags": ["x" * (1 << 20)]}]}},
        422,
        "string_too_long",
    ),
    (
        "a 100,000-character document_id",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": FACT, "document_id": "d" * 100_000}]}},
        422,
        "document_id",
    ),
    (
        "1 MiB of metadata",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": FACT, "metadata": {"k": "v" * (1 << 20)}}]}},
        422,
        "metadata",
    ),
    (
        "1 MiB of entities",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": FACT, "entities": ["e" * (1 << 20)]}]}},
        422,
        "entities",
    ),
    (
        "a 1 MiB document tag",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": FACT}], "document_tags": ["x" * (1 << 20)]}},
        422,
        "document_tags",
    ),
    (
        "a 5 MiB mission",
        "PATCH",
        "/v1/default/banks/h/config",
        {"json": {"updates": {"retain_mission": "m" * (5 << 20)}}},
        400,
        "retain_mission",
    ),
    (
        "a 5 MiB mission on the bank profile",
        "PUT",
        "/v1/default/banks/h",
        {"json": {"mission": "m" * (5 << 20)}},
        400,
        "mission",
    ),
    (
        "an MCP retain padded 65 deep",
        "POST",
        "/mcp",
        {
            "content": json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {
                        "name": "retain",
                        "arguments": {"bank_id": "h", "content": FACT},
                        "_meta": {"pad": nested(40)},
                    },
                }
            ),
            "headers": {"content-type": "application/json"},
        },
        400,
        "Parse error",
    ),
    (
        "a document re-tag padded 65 deep",
        "PATCH",
        "/v1/default/banks/h/documents/d1",
        {"json": {"tags": ["topic:x", "topic:y"], "pad": nested(40)}},
        422,
        "json_too_deep",
    ),
    (
        "a 5 MiB profile padded 65 deep",
        "PUT",
        "/v1/default/banks/h",
        {"json": {"mission": "m" * (5 << 20), "pad": nested(40)}},
        422,
        "json_too_deep",
    ),
    (
        "surrogate bytes written as UTF-8",
        "POST",
        "/v1/default/banks/h/memories",
        {"content": b'{"items": [{"content": "x \xed\xa0\x80 y"}]}', "headers": {"content-type": "application/json"}},
        422,
        "string_unicode",
    ),
    (
        "a 3 MB item",
        "POST",
        "/v1/default/banks/h/memories",
        {"json": {"items": [{"content": "x " * 1_500_000}]}},
        413,
        "limit",
    ),
]


def counts(data_dir: Path) -> tuple[int, int]:
    db = ledger_db(data_dir)
    try:
        return (
            db.execute("SELECT COUNT(*) FROM memories").fetchone()[0],
            db.execute("SELECT COUNT(*) FROM audit_events").fetchone()[0],
        )
    finally:
        db.close()


@pytest.fixture(params=["self-hosted", "in front of the stand-in"], scope="module")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("hostile")
    if request.param == "self-hosted":
        with running_warden(local_settings(tmp / "data", body_timeout=0.5, server={"body_deadline": 2.0})) as url:
            _seed(url)
            yield url, tmp / "data"
        return
    with running_standin(tmp / "backend") as backend:
        settings = make_settings(backend.url, data_dir=tmp / "data", server={"body_timeout": 0.5, "body_deadline": 2.0})
        with running_warden(settings) as url:
            _seed(url)
            yield url, tmp / "data"


def _seed(url: str) -> None:
    r = httpx.post(f"{url}/v1/default/banks/h/memories", json={"items": [{"content": FACT}]}, timeout=30)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(("name", "method", "path", "kwargs", "status", "word"), CASES, ids=[c[0] for c in CASES])
def test_hostile_input_is_a_clear_4xx_and_writes_nothing(
    server: tuple[str, Path], name: str, method: str, path: str, kwargs: dict[str, Any], status: int, word: str
) -> None:
    url, data_dir = server
    before = counts(data_dir)
    r = httpx.request(method, url + path, timeout=60, **kwargs)
    assert r.status_code == status, (name, r.status_code, r.text[:300])
    assert word in r.text
    assert counts(data_dir) == before  # no ledger row, no audit event
    assert httpx.get(f"{url}/warden/health", timeout=10).status_code == 200


def test_a_body_shorter_than_its_content_length_is_408_within_the_timeout(server: tuple[str, Path]) -> None:
    url, data_dir = server
    before = counts(data_dir)
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(
            b"POST /v1/default/banks/h/memories HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"items":'
        )
        started = time.monotonic()
        answer = s.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
    assert time.monotonic() - started < 20  # not held: answered once the body stalls (0.5 s here)
    assert counts(data_dir) == before


def test_a_body_drip_fed_a_byte_at_a_time_is_cut_off_at_the_deadline(server: tuple[str, Path]) -> None:
    """Issue #33: one byte every few seconds never stalled long enough for ``body_timeout``, and the
    connection was held for ever. Now the whole body has ``body_deadline`` (2 s here) to arrive."""
    url, data_dir = server
    before = counts(data_dir)
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps({"items": [{"content": FACT}]}).encode()
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(
            b"POST /v1/default/banks/h/memories HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
        )
        started = time.monotonic()
        s.settimeout(0.3)  # a byte every 0.3 s: under the 0.5 s stall timeout every time
        answer = b""
        for byte in body:
            try:
                s.sendall(bytes([byte]))
                answer += s.recv(4096)
            except TimeoutError:
                continue
            except OSError:  # the server answered and closed
                break
            if answer:
                break
        if not answer:
            s.settimeout(10)
            answer = s.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"longer than 2 s in all" in answer
    assert time.monotonic() - started < 10
    assert counts(data_dir) == before


def raw_request(url: str, request: bytes) -> bytes:
    """One request as written (no client normalising its path); the answer's first bytes."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(request)
        return s.recv(4096)


def test_a_dot_segment_anywhere_in_the_path_is_refused(server: tuple[str, Path]) -> None:
    """``/banks/ops/x/../memories`` routed to the pass-through, then normalised by an HTTP library,
    would reach the backend's retain (or delete) unjudged."""
    url, data_dir = server
    before = counts(data_dir)
    body = json.dumps({"items": [{"content": "My password is hunter2 and it never changes."}]}).encode()
    for path in (b"/v1/default/banks/h/x/../memories", b"/v1/default/banks/h/x/%2e%2e/memories", b"/v1/./x"):
        answer = raw_request(
            url,
            b"POST " + path + b" HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body,
        )
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    answer = raw_request(url, b"DELETE /v1/default/banks/h/x/../memories HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400")
    assert counts(data_dir) == before
    listed = httpx.get(f"{url}/v1/default/banks/h/memories/list").json()["items"]
    assert FACT in [m["text"] for m in listed]  # nothing deleted


def test_a_request_without_a_host_header_is_answered(server: tuple[str, Path]) -> None:
    url, _ = server
    assert raw_request(url, b"GET /warden/health HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.1 200")


def test_integers_past_64_bits_pass_through_unchanged() -> None:
    big = 18446744073709551616
    assert parse_json(json.dumps({"n": big, "m": [-big, 1]}).encode()) == {"n": big, "m": [-big, 1]}


def test_a_refused_bank_id_reaches_no_backend(tmp_path: Path) -> None:
    """A newline in a bank id used to leave a failed ledger row and audit events behind a 400."""
    with running_standin(tmp_path / "backend") as backend:
        with running_warden(make_settings(backend.url, data_dir=tmp_path / "data")) as url:
            r = httpx.post(f"{url}/v1/default/banks/a%0Ab/memories", json={"items": [{"content": FACT}]})
            assert r.status_code == 400
            r = httpx.get(f"{url}/v1/default/banks/%2e%2e/stats")  # the pass-through too
            assert r.status_code == 400
        assert backend.requests == []
        assert counts(tmp_path / "data") == (0, 0)
