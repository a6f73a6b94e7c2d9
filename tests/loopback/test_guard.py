"""No writes from web pages: the Origin and Host checks and the JSON content type, memwarden on
loopback in front of the Hindsight stand-in (which records every request it gets) and self-hosted.
A refused request triggers nothing: no ledger row, no audit event, no backend call (before, a
retain refused by Hindsight still seeded missions into a new bank)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.fronts.guard import allowed_host_names, host_allowed, host_name
from testing.standin import Standin, running_standin
from tests.conftest import make_settings, running_warden
from tests.loopback.test_hostile import counts
from tests.loopback.test_local_store import local_settings

FACT = {"items": [{"content": "The staging cluster has 3 nodes with 16 GB RAM each."}]}
PAGE = "http://evil.example"


class Rig:
    def __init__(self, url: str, backend: Standin, data_dir: Path) -> None:
        self.url, self.backend, self.data_dir = url, backend, data_dir

    def written(self) -> tuple[int, int]:
        return counts(self.data_dir)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    with running_standin(tmp_path / "backend") as backend:
        settings = make_settings(
            backend.url,
            data_dir=tmp_path / "data",
            config_guard={"settle_interval": 0.05},  # missions on: a refused request must not seed them
            server={"allowed_origins": ["http://app.example:3000"]},
        )
        with running_warden(settings) as url:
            yield Rig(url, backend, tmp_path / "data")


def nothing_happened(rig: Rig) -> None:
    assert rig.written() == (0, 0)
    assert rig.backend.requests == []  # not even a bank created by mission seeding


def test_a_simple_cross_site_post_from_a_web_page_is_refused_and_does_nothing(rig: Rig) -> None:
    r = httpx.post(
        f"{rig.url}/v1/default/banks/ops/memories",
        content=json.dumps(FACT),
        headers={"content-type": "text/plain", "origin": PAGE},
    )
    assert r.status_code == 403
    assert "Origin 'http://evil.example' is not allowed" in r.json()["detail"]
    assert "access-control-allow-origin" not in r.headers
    for method, path in (
        ("PATCH", "/v1/default/banks/ops/config"),
        ("DELETE", "/v1/default/banks/ops"),
        ("POST", "/warden/v1/banks/ops/plans"),
        ("GET", "/warden/v1/audit"),
    ):
        assert httpx.request(method, rig.url + path, headers={"origin": PAGE}, json={}).status_code == 403
    preflight = httpx.options(
        f"{rig.url}/v1/default/banks/ops/memories",
        headers={"origin": PAGE, "access-control-request-method": "POST"},
    )
    assert preflight.status_code == 403
    nothing_happened(rig)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_a_json_body_not_sent_as_json_is_hindsights_422_and_does_nothing(rig: Rig, content_type: str) -> None:
    body = json.dumps(FACT)
    r = httpx.post(f"{rig.url}/v1/default/banks/ops/memories", content=body, headers={"content-type": content_type})
    assert r.status_code == 422
    assert r.json() == {
        "detail": [
            {
                "type": "model_attributes_type",
                "loc": ["body"],
                "msg": "Input should be a valid dictionary or object to extract fields from",
                "input": body,
            }
        ]
    }
    patch = httpx.patch(
        f"{rig.url}/v1/default/banks/ops/config",
        content=json.dumps({"updates": {"retain_mission": "x"}}),
        headers={"content-type": content_type},
    )
    assert patch.status_code == 422
    profile = httpx.put(f"{rig.url}/v1/default/banks/ops", content="{}", headers={"content-type": content_type})
    assert profile.status_code == 422
    recall = httpx.post(
        f"{rig.url}/v1/default/banks/ops/memories/recall",
        content='{"query": "x"}',
        headers={"content-type": content_type},
    )
    assert recall.status_code == 422
    nothing_happened(rig)


def test_json_content_types_are_json(rig: Rig) -> None:
    for content_type in ("application/json", "application/json; charset=utf-8", "application/vnd.api+json"):
        r = httpx.post(
            f"{rig.url}/v1/default/banks/ops/memories", content=json.dumps(FACT), headers={"content-type": content_type}
        )
        assert r.status_code == 200, (content_type, r.text)


def test_dns_rebinding_a_foreign_host_name_is_refused(rig: Rig) -> None:
    port = rig.url.rsplit(":", 1)[1]
    r = httpx.post(f"{rig.url}/v1/default/banks/ops/memories", json=FACT, headers={"host": f"evil.example:{port}"})
    assert r.status_code == 403
    assert "Host 'evil.example:" in r.json()["detail"]
    nothing_happened(rig)
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
        assert httpx.get(f"{rig.url}/warden/health", headers={"host": host}).status_code == 200


def test_an_allowed_origin_gets_cors_and_memwardens_own_origin_needs_none(rig: Rig) -> None:
    app = "http://app.example:3000"
    preflight = httpx.options(
        f"{rig.url}/v1/default/banks/ops/memories/recall",
        headers={
            "origin": app,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type",
        },
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == app
    assert preflight.headers["access-control-allow-headers"] == "content-type"
    r = httpx.post(f"{rig.url}/v1/default/banks/ops/memories", json=FACT, headers={"origin": app})
    assert r.status_code == 200
    assert (r.headers["access-control-allow-origin"], r.headers["vary"]) == (app, "Origin")
    own = httpx.get(f"{rig.url}/warden/health", headers={"origin": rig.url})
    assert own.status_code == 200
    assert "access-control-allow-origin" not in own.headers


def test_self_hosted_refuses_the_same(tmp_path: Path) -> None:
    with running_warden(local_settings(tmp_path / "data")) as url:
        body: dict[str, Any] = {"content": json.dumps(FACT), "headers": {"content-type": "text/plain"}}
        assert httpx.post(f"{url}/v1/default/banks/ops/memories", **body).status_code == 422
        assert (
            httpx.post(f"{url}/v1/default/banks/ops/memories", json=FACT, headers={"origin": PAGE}).status_code == 403
        )
        assert httpx.post(f"{url}/v1/default/banks/ops/memories", json=FACT).status_code == 200


def test_bound_to_every_address_ip_literals_pass_names_need_listing() -> None:
    allowed = allowed_host_names("0.0.0.0", [])
    assert host_allowed("172.17.0.2:8890", allowed, any_ip=True)
    assert host_allowed("[fd00::1]:8890", allowed, any_ip=True)
    assert host_allowed("localhost:8890", allowed, any_ip=True)
    assert not host_allowed("evil.example:8890", allowed, any_ip=True)  # a rebinding name
    assert host_allowed("", allowed, any_ip=True)  # no Host at all (HTTP/1.0): not a browser


def test_the_host_rule() -> None:
    assert host_name("[::1]:8890") == "::1"
    assert host_name("LocalHost:8890") == "localhost"
    assert host_name("::1") == "::1"
    assert allowed_host_names("127.0.0.1", []) == {"localhost", "127.0.0.1", "::1"}
    assert allowed_host_names("10.0.0.5", []) == {"localhost", "127.0.0.1", "::1", "10.0.0.5"}
    assert allowed_host_names("0.0.0.0", []) == {"localhost", "127.0.0.1", "::1"}  # and any IP (above)
    assert allowed_host_names("127.0.0.1", ["memory.internal"]) == {"memory.internal"}
    assert allowed_host_names("127.0.0.1", ["*"]) is None


def raw_request(url: str, head: str) -> tuple[int, bytes]:
    """One request written by hand (two ``Host`` headers: no HTTP client sends them); its status and
    body."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(head.encode("latin-1"))
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.partition(b"\r\n\r\n")[2]


def test_a_host_that_is_not_a_host_or_two_hosts_are_refused_and_do_nothing(rig: Rig) -> None:
    """Issue #33: ``Host: 127.0.0.1:PORT@evil.example`` passed (its host was read as 127.0.0.1), and
    of two ``Host`` headers only the last was checked."""
    port = rig.url.rsplit(":", 1)[1]
    body = json.dumps(FACT)
    for hosts in (
        [f"127.0.0.1:{port}@evil.example"],
        [f"evil.example#@127.0.0.1:{port}"],
        [f"127.0.0.1:{port}/evil"],
        ["127.0.0.1 evil.example"],
        [f"evil.example:{port}", f"127.0.0.1:{port}"],
        [f"127.0.0.1:{port}", f"evil.example:{port}"],
    ):
        head = "".join(f"Host: {h}\r\n" for h in hosts)
        status, answer = raw_request(
            rig.url,
            f"POST /v1/default/banks/ops/memories HTTP/1.1\r\n{head}Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}",
        )
        assert status in (400, 403), (hosts, status, answer)
    nothing_happened(rig)
    assert (
        raw_request(rig.url, f"GET /warden/health HTTP/1.1\r\nHost: [::1]:{port}\r\nConnection: close\r\n\r\n")[0]
        == 200
    )


def test_a_parameter_given_twice_is_refused_before_any_route_reads_it(rig: Rig) -> None:
    for path in (
        "/v1/default/banks/ops/memories?async=true&async=false",
        "/v1/default/banks/ops/memories/list?limit=5&limit=",
        "/warden/v1/audit?bank=ops&bank=other",
    ):
        r = httpx.request("POST" if path.endswith("false") else "GET", rig.url + path, json=FACT)
        assert r.status_code == 400, (path, r.text)
        assert "given 2 times; it takes one value" in r.json()["detail"]
    nothing_happened(rig)
    # A list parameter may repeat, as Hindsight's clients send it.
    r = httpx.get(f"{rig.url}/v1/default/banks/ops/memories/list?tags=a&tags=b")
    assert r.status_code != 400, r.text


def test_a_hostile_origin_header_is_answered_at_once(tmp_path: Path) -> None:
    """The refusal quotes the Origin with its secrets masked: a header shaped to make the spelled-
    password detector backtrack ("password a b c" + spaces + "!") held the event loop for hours
    (found by a review of issue #33's change)."""
    from tests.loopback.test_local_store import local_settings

    with running_warden(local_settings(tmp_path / "data")) as url:
        origin = "password a b c" + " " * 60 + "!"
        r = httpx.get(f"{url}/warden/health", headers={"origin": origin}, timeout=30)
        assert r.status_code == 403
        assert httpx.get(f"{url}/warden/health", timeout=30).status_code == 200
