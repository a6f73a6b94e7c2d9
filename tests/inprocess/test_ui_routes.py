"""The dashboard's routes at the ASGI level: the page and its files with their security headers,
nothing else served from the package, no inline script and no asset from the network; the read
endpoints it added to /warden/v1 (the banks, a bank's overview, the review queue's pages) with
their refusals and the scopes they need; a foreign Origin refused even with a valid key."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from memwarden.fronts.ui.routes import assets
from memwarden.proxy.app import create_app
from tests.ui_rig import BANK, ui_settings

pytestmark = pytest.mark.anyio
STATIC = Path(__file__).parents[2] / "fronts/ui/static"
RETAIN = f"/v1/default/banks/{BANK}/memories"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ui_settings(tmp_path))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            yield c


def _secure(r: httpx.Response) -> None:
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert "unsafe-eval" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["x-frame-options"] == "DENY"
    assert "set-cookie" not in r.headers


async def test_the_page_and_its_files_are_served_with_strict_headers(client: httpx.AsyncClient) -> None:
    r = await client.get("/warden/ui")
    assert r.status_code == 307
    assert r.headers["location"] == "/warden/ui/"
    page = await client.get("/warden/ui/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    _secure(page)
    assert '<script type="module" src="js/app.js">' in page.text
    css = await client.get("/warden/ui/app.css")
    assert css.headers["content-type"].startswith("text/css")
    assert "WenQuanYi Micro Hei" in css.text
    _secure(css)
    for name in assets():
        r = await client.get(f"/warden/ui/{name}")
        assert r.status_code == 200, name
        _secure(r)
    assert {"index.html", "app.css", "js/app.js", "js/api.js", "js/views/audit.js"} <= set(assets())


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/warden/ui/nope.js", 404),
        ("/warden/ui/js/", 404),
        ("/warden/ui/routes.py", 404),  # the package's other files are not served
        ("/warden/ui/%2e%2e/routes.py", 400),  # the guard: no dot segments
        ("/warden/ui/static/index.html", 404),
    ],
)
async def test_nothing_but_the_dashboards_files_is_served(client: httpx.AsyncClient, path: str, status: int) -> None:
    r = await client.get(path)
    assert r.status_code == status, (path, r.text)
    assert "<html" not in r.text


def test_no_inline_script_or_style_and_nothing_from_the_network() -> None:
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag, tag
    assert not re.search(r"<script\b[^>]*>\s*[^<\s]", html)  # every script element is empty: no inline code
    assert not re.search(r"\son[a-z]+\s*=", html), "an inline event handler"
    assert not re.search(r"<style|\sstyle\s*=", html)
    for path in STATIC.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            others = set(re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text)) - {"http://www.w3.org"}
            assert not others, (path.name, others)  # only the SVG namespace, which is a name, not a fetch
            if path.suffix == ".css":
                assert "@import" not in text, path.name  # no font or image fetched
                assert "url(" not in text, path.name
            assert not re.search(r"innerHTML\s*=|outerHTML\s*=|insertAdjacentHTML|document\.write", text), path.name


def test_every_module_import_names_a_served_file() -> None:
    served = set(assets())
    for name in (n for n in served if n.endswith(".js")):
        source = (STATIC / name).read_text(encoding="utf-8")
        for target in re.findall(r'from "(\.{1,2}/[^"]+)"', source):
            resolved = (STATIC / name).parent.joinpath(target).resolve().relative_to(STATIC.resolve()).as_posix()
            assert resolved in served, (name, target)


async def test_the_page_needs_no_key_but_the_api_does(client: httpx.AsyncClient) -> None:
    made = await client.post("/warden/v1/keys", json={"name": "root", "admin": ["*"]})
    assert made.status_code == 201
    assert (await client.get("/warden/ui/")).status_code == 200  # the files hold no data
    assert (await client.get("/warden/ui/js/app.js")).status_code == 200
    refused = await client.get("/warden/v1/banks")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    bearer = {"Authorization": f"Bearer {made.json()['token']}"}
    assert (await client.get("/warden/v1/banks", headers=bearer)).status_code == 200


async def test_a_foreign_origin_is_refused_even_with_the_key_and_nothing_is_done(client: httpx.AsyncClient) -> None:
    await client.post(RETAIN, json={"items": [{"content": "The search service listens on port 9200."}]})
    token = (await client.post("/warden/v1/keys", json={"name": "root", "admin": ["*"]})).json()["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    (memory,) = (await client.get(f"/warden/v1/banks/{BANK}/memories", headers=bearer)).json()["items"]
    before = (await client.get("/warden/v1/audit", headers=bearer)).json()["last_seq"]
    r = await client.post(
        f"/warden/v1/banks/{BANK}/memories/{memory['id']}/archive",
        json={},
        headers={**bearer, "Origin": "https://evil.example"},
    )
    assert r.status_code == 403
    assert "Origin" in r.json()["detail"]
    assert "access-control-allow-origin" not in r.headers
    after = (await client.get(f"/warden/v1/banks/{BANK}/memories/{memory['id']}", headers=bearer)).json()
    assert after["status"] == "active"
    assert (await client.get("/warden/v1/audit", headers=bearer)).json()["last_seq"] == before
    same = await client.get("/warden/v1/banks", headers={**bearer, "Origin": "http://127.0.0.1"})
    assert same.status_code == 200  # the dashboard's own origin


# -- the read endpoints the dashboard added ---------------------------------------------------------


async def _seed(client: httpx.AsyncClient) -> None:
    items = [
        {"content": "默认模型：deepseek/deepseek-v4-flash"},
        {"content": "The search service listens on port 9200 in staging.", "tags": ["topic:infra"]},
        {"content": "The metrics service listens on port 9100 in staging.", "tags": ["topic:infra"]},
    ]
    assert (await client.post(RETAIN, json={"items": items})).status_code == 200
    for value in ("gpt-4.1", "claude", "qwen"):
        r = await client.post(RETAIN, json={"items": [{"content": f"默认模型：{value}"}]})
        assert r.headers["x-warden-decisions"] == '{"review":1}'
    await client.post("/v1/default/banks/second/memories", json={"items": [{"content": "季度复盘在每季度最后一周。"}]})


async def test_the_banks_with_their_memories_by_status(client: httpx.AsyncClient) -> None:
    assert (await client.get("/warden/v1/banks")).json() == {"items": [], "total": 0}
    await _seed(client)
    listing = (await client.get("/warden/v1/banks")).json()
    assert [b["bank_id"] for b in listing["items"]] == [BANK, "second"]
    ops = listing["items"][0]
    assert ops["by_status"] == {"active": 3, "review": 3}
    assert ops["total"] == 6
    assert ops["last_recorded_at"].startswith("20")


async def test_a_banks_overview_counts_by_status_topic_and_stage_and_day(client: httpx.AsyncClient) -> None:
    await _seed(client)
    view = (await client.get(f"/warden/v1/banks/{BANK}/overview")).json()
    assert view["by_status"] == {"active": 3, "review": 3}
    assert view["total"] == 6
    assert view["review_queue"] == 3
    cells = {(c["topic"], c["stage"]): c["count"] for c in view["matrix"]}
    assert cells == {("dev_tools", "decision"): 1, ("infra", "reference"): 2}
    assert sum(cells.values()) == view["by_status"]["active"]
    # Each cell is the list the API gives for its filters.
    for (topic, stage), count in cells.items():
        page = (
            await client.get(
                f"/warden/v1/banks/{BANK}/memories", params={"status": "active", "topic": topic, "stage": stage}
            )
        ).json()
        assert page["total"] == count
    assert len(view["growth"]) == 30
    assert view["growth"][-1] == {"day": view["growth"][-1]["day"], "recorded": 6, "total": 6}
    assert all(d["recorded"] == 0 for d in view["growth"][:-1])
    assert view["last_config_change"] is None
    review = (
        await client.get(f"/warden/v1/banks/{BANK}/overview", params={"status": "review,active", "days": 2})
    ).json()
    assert sum(c["count"] for c in review["matrix"]) == 6
    assert len(review["growth"]) == 2
    r = await client.patch(f"/v1/default/banks/{BANK}/config", json={"updates": {"retain_mission": "Facts only."}})
    assert r.status_code == 200
    last = (await client.get(f"/warden/v1/banks/{BANK}/overview")).json()["last_config_change"]
    assert last["change"] == {"retain_mission": "Facts only."}
    assert last["outcome"] == "kept"
    empty = (await client.get("/warden/v1/banks/nothing-here/overview")).json()
    assert empty["total"] == 0
    assert empty["matrix"] == []
    assert empty["growth"][-1]["total"] == 0


@pytest.mark.parametrize(
    ("params", "loc"),
    [({"days": "0"}, "days"), ({"days": "367"}, "days"), ({"days": "x"}, "days"), ({"status": "gone"}, "status")],
)
async def test_a_bad_overview_query_is_a_precise_422(
    client: httpx.AsyncClient, params: dict[str, str], loc: str
) -> None:
    r = await client.get(f"/warden/v1/banks/{BANK}/overview", params=params)
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["query", loc]


async def test_the_memories_are_paged_by_cursor_and_a_bad_cursor_is_a_precise_422(client: httpx.AsyncClient) -> None:
    await _seed(client)
    listing = f"/warden/v1/banks/{BANK}/memories"
    whole = (await client.get(listing)).json()
    assert whole["next"] is None  # one page holds them all
    seen, cursor = [], None
    while True:
        page = (await client.get(listing, params={"limit": 2, **({"after": cursor} if cursor else {})})).json()
        assert page["total"] == whole["total"]
        seen += [m["id"] for m in page["items"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert seen == [m["id"] for m in whole["items"]]
    assert len(seen) == whole["total"]
    first = (await client.get(listing, params={"limit": 2})).json()
    for bad in ({"after": "nonsense"}, {"after": first["next"], "offset": "2"}, {"after": "x" * 2001}):
        r = await client.get(listing, params=bad)
        assert r.status_code == 422, bad
        assert r.json()["detail"][0]["loc"] == ["query", "after"]


async def test_the_review_queue_is_paged_by_the_server(client: httpx.AsyncClient) -> None:
    await _seed(client)
    whole = (await client.get(f"/warden/v1/banks/{BANK}/review")).json()
    assert whole["total"] == 3
    assert len(whole["items"]) == 3
    held = [e["held"]["content"] for e in whole["items"]]
    assert held == ["默认模型：gpt-4.1", "默认模型：claude", "默认模型：qwen"]  # oldest first
    second = (await client.get(f"/warden/v1/banks/{BANK}/review", params={"limit": 1, "offset": 1})).json()
    assert [e["held"]["content"] for e in second["items"]] == held[1:2]
    assert second["total"] == 3
    assert second["items"][0]["conflicts_with"]["content"] == "默认模型：deepseek/deepseek-v4-flash"
    for bad in ({"limit": "0"}, {"limit": "1001"}, {"offset": "-1"}, {"limit": "a"}):
        assert (await client.get(f"/warden/v1/banks/{BANK}/review", params=bad)).status_code == 422


async def test_the_new_reads_need_admin_like_the_other_admin_routes(client: httpx.AsyncClient) -> None:
    await _seed(client)
    root = (await client.post("/warden/v1/keys", json={"name": "root", "admin": ["*"]})).json()["token"]
    team = await client.post(
        "/warden/v1/keys", json={"name": "team", "admin": [BANK]}, headers={"Authorization": f"Bearer {root}"}
    )
    reader = await client.post(
        "/warden/v1/keys", json={"name": "reader", "read": ["*"]}, headers={"Authorization": f"Bearer {root}"}
    )
    as_team = {"Authorization": f"Bearer {team.json()['token']}"}
    as_reader = {"Authorization": f"Bearer {reader.json()['token']}"}
    assert (await client.get(f"/warden/v1/banks/{BANK}/overview", headers=as_team)).status_code == 200
    assert (await client.get("/warden/v1/banks/second/overview", headers=as_team)).status_code == 403
    listing = await client.get("/warden/v1/banks", headers=as_team)  # names every bank: admin on every bank
    assert listing.status_code == 403
    assert "every bank" in listing.json()["detail"]
    refused = await client.get(f"/warden/v1/banks/{BANK}/overview", headers=as_reader)
    assert refused.status_code == 403
    assert f"may not admin bank '{BANK}'" in refused.json()["detail"]
