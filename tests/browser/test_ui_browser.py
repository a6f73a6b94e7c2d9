"""The dashboard in a real browser: Debian's Chromium, headless, driven by Playwright for Python
(``executable_path=/usr/bin/chromium``; no browser download), against memwarden self-hosted on
loopback, seeded with memories in Chinese and English and a key configured. Each page loads
without a console error; the review, archive/restore, plan and rollback buttons change the ledger
exactly as the API does (checked through the API); the audit tail shows a write within a second;
a wrong phrase, an expired plan and a 409 are shown with nothing applied; a phone's width renders.
Screenshots of each page are written to :data:`SCREENSHOTS` (kept by CI, shown by docs/guides/dashboard.md)."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, expect

from memwarden.policies.keys import split_token
from testing.loopback import serve_in_thread
from tests.browser.test_browser import page_app
from tests.cut_proxy import cut_proxy
from tests.ui_rig import BANK, FACTS, HELD, MISSION, Rig, ui_rig

# The pages' screenshots go to a scratch folder: running the tests never rewrites a tracked file.
# MEMWARDEN_SCREENSHOTS=docs/screenshots refreshes the pictures of docs/guides/dashboard.md.
SCREENSHOTS = Path(os.environ.get("MEMWARDEN_SCREENSHOTS") or Path(tempfile.gettempdir()) / "memwarden-screenshots")
LAPTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with ui_rig(tmp_path_factory.mktemp("ui")) as seeded:
        yield seeded


class Console:
    """The page's console errors and uncaught exceptions; ``allowed``: the HTTP statuses a test
    provokes on purpose (Chromium logs each 4xx answer as an error)."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def unexpected(self, *allowed: int) -> list[str]:
        said = [f"status of {status}" for status in allowed]
        return [e for e in self.errors if not any(s in e for s in said)]


def open_context(browser: Browser, token: str | None, viewport: dict[str, int] = LAPTOP) -> BrowserContext:
    context = browser.new_context(viewport=viewport, locale="en-US")  # type: ignore[arg-type]
    if token is not None:  # as if the person had given the key in this tab
        context.add_init_script(f"sessionStorage.setItem('memwarden.key', {token!r})")
    return context


@pytest.fixture
def page(browser: Browser, rig: Rig) -> Iterator[tuple[Page, Console]]:
    context = open_context(browser, rig.token)
    tab = context.new_page()
    console = Console(tab)
    try:
        yield tab, console
    finally:
        context.close()


def goto(tab: Page, rig: Rig, route: str) -> None:
    tab.goto(f"{rig.url}/warden/ui/{route}")
    expect(tab.locator("main h1")).to_be_visible()
    expect(tab.locator("main")).not_to_contain_text("Loading…")


def shoot(tab: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def confirm(tab: Page) -> None:
    expect(tab.locator("#confirm-dialog")).to_be_visible()
    tab.locator("#confirm-yes").click()


def key_id(token: str) -> str:
    parts = split_token(token)
    assert parts is not None
    return parts[0]


def held_row(tab: Page, text: str) -> Any:
    return tab.locator("article.review-item").filter(has_text=text)


# -- every page, as seeded -------------------------------------------------------------------------


def test_each_page_loads_without_a_console_error(page: tuple[Page, Console], rig: Rig) -> None:
    tab, console = page
    model = rig.by_text(FACTS[0]["content"])
    goto(tab, rig, "#/")
    expect(tab.locator("main table")).to_contain_text(BANK)
    expect(tab.locator("main table")).to_contain_text(f"{BANK}-notes")
    shoot(tab, "banks")
    goto(tab, rig, f"#/b/{BANK}")
    expect(tab.locator("main")).to_contain_text("Topic × stage (active)")
    expect(tab.locator(".matrix")).to_contain_text("dev_tools")
    expect(tab.locator("main")).to_contain_text("retain_mission")  # the last config change
    expect(tab.locator("main")).to_contain_text("items wait in the review queue")  # the health report
    shoot(tab, "bank")
    goto(tab, rig, f"#/b/{BANK}/memories?q=默认模型")
    expect(tab.locator("main table")).to_contain_text("默认模型：deepseek/deepseek-v4-flash")
    shoot(tab, "memories")
    goto(tab, rig, f"#/b/{BANK}/m/{model['id']}")
    expect(tab.locator(".content")).to_have_text(FACTS[0]["content"])
    expect(tab.locator("main")).to_contain_text(model["content_hash"])
    expect(tab.locator("main")).to_contain_text("config.default_model")
    shoot(tab, "memory")
    goto(tab, rig, f"#/b/{BANK}/review")
    expect(tab.locator("article.review-item")).to_have_count(len(HELD))
    expect(held_row(tab, HELD[0]["content"])).to_contain_text(FACTS[0]["content"])  # beside its conflict
    shoot(tab, "review")
    goto(tab, rig, f"#/audit?bank={BANK}")
    expect(tab.locator("#live-state")).to_have_text("live")
    tab.get_by_role("button", name="Verify the chain").click()
    expect(tab.locator("#verify-result")).to_contain_text("The chain is intact")
    shoot(tab, "audit")
    goto(tab, rig, f"#/b/{BANK}/explain")
    tab.get_by_label("Query").fill("搜索服务的端口 port 9200")
    tab.get_by_role("button", name="Explain").click()
    expect(tab.locator("#explain-result table")).to_contain_text("port 9200")
    expect(tab.locator("#explain-result")).to_contain_text("Full-text query")
    shoot(tab, "explain")
    goto(tab, rig, f"#/b/{BANK}/plans")
    expect(tab.locator("main")).to_contain_text("部署区域：cn-north-1")  # past its period
    shoot(tab, "plans")
    goto(tab, rig, f"#/b/{BANK}/config")
    expect(tab.locator("main table")).to_contain_text(f"retain_mission = {MISSION}")
    shoot(tab, "config")
    assert console.unexpected() == []


def test_without_a_key_the_page_asks_for_one_and_keeps_it_in_the_tab(browser: Browser, rig: Rig) -> None:
    context = open_context(browser, None)
    tab = context.new_page()
    console = Console(tab)
    try:
        tab.goto(f"{rig.url}/warden/ui/")
        expect(tab.locator("#key-dialog")).to_be_visible()
        expect(tab.locator("#key-why")).to_contain_text("A key is needed")
        tab.get_by_label("Key", exact=True).fill(rig.token)
        tab.get_by_role("button", name="Use this key").click()
        expect(tab.locator("main table")).to_contain_text(BANK)
        assert tab.evaluate("sessionStorage.getItem('memwarden.key')") == rig.token
        assert context.cookies() == []  # no cookie: nothing a browser would send to memwarden by itself
        assert console.unexpected(401) == []
    finally:
        context.close()


def test_a_key_without_the_scope_gets_a_clear_message(browser: Browser, rig: Rig) -> None:
    context = open_context(browser, rig.reader)
    tab = context.new_page()
    console = Console(tab)
    try:
        goto(tab, rig, "#/")
        expect(tab.locator(".message")).to_contain_text("may not admin every bank")
        expect(tab.get_by_label("Open a bank by its id")).to_be_visible()
        tab.goto(f"{rig.url}/warden/ui/#/b/{BANK}/review")
        expect(tab.locator(".message.error")).to_contain_text("Not allowed: Key mwk_")
        expect(tab.locator(".message.error")).to_contain_text(f"may not admin bank '{BANK}'")
        assert console.unexpected(403) == []
    finally:
        context.close()


def test_memwarden_unreachable_is_said_in_words(page: tuple[Page, Console], rig: Rig) -> None:
    tab, _console = page
    tab.route("**/warden/v1/**", lambda route: route.abort("connectionrefused"))
    tab.goto(f"{rig.url}/warden/ui/#/b/{BANK}")
    expect(tab.locator(".message.error")).to_contain_text("memwarden is not answering")
    expect(tab.get_by_role("button", name="Retry")).to_be_visible()


# -- actions: each changes the ledger as the API would ------------------------------------------


def test_approve_and_reject_one_held_item(page: tuple[Page, Console], rig: Rig) -> None:
    tab, console = page
    approved, rejected = HELD[0]["content"], HELD[3]["content"]
    goto(tab, rig, f"#/b/{BANK}/review")
    held_row(tab, approved).get_by_role("button", name="Approve").click()
    expect(tab.locator("main .message.ok")).to_contain_text("Approved: active")
    assert rig.by_text(approved)["status"] == "active"
    assert rig.by_text(FACTS[0]["content"])["status"] == "superseded"
    expect(held_row(tab, approved)).to_have_count(0)
    held_row(tab, rejected).get_by_role("button", name="Reject…").click()
    tab.locator("#confirm-no").click()  # asked first: cancelled, nothing done
    assert rig.by_text(rejected)["status"] == "review"
    held_row(tab, rejected).get_by_role("button", name="Reject…").click()
    confirm(tab)
    expect(tab.locator("main .message.ok")).to_contain_text("Rejected: rejected")
    assert rig.by_text(rejected)["status"] == "rejected"
    (event,) = list(rig.audit(action="reject_review"))
    assert event["actor"] == key_id(rig.token)  # audited with the key's id, by the API
    assert console.unexpected() == []


def test_many_held_items_through_a_plan_and_its_phrase(page: tuple[Page, Console], rig: Rig) -> None:
    tab, console = page
    first, second = HELD[1]["content"], HELD[2]["content"]
    goto(tab, rig, f"#/b/{BANK}/review")
    held_row(tab, first).get_by_label("select", exact=False).first.check()
    held_row(tab, second).get_by_label("select", exact=False).first.check()
    tab.get_by_role("button", name="Plan: reject selected…").click()
    expect(tab.locator("main h1")).to_contain_text("Plan")
    expect(tab.locator("main table")).to_contain_text(first)
    plan_id = tab.locator("main h1 code").inner_text()
    tab.get_by_label("Confirmation phrase").fill(f"我确认执行计划{plan_id}")  # the space missing
    tab.get_by_role("button", name="Apply the plan").click()
    expect(tab.locator("#apply-result .message.error")).to_contain_text("the confirmation phrase does not match")
    assert rig.by_text(first)["status"] == "review"  # nothing applied
    assert rig.http.get(f"/warden/v1/banks/{BANK}/plans/{plan_id}").json()["status"] == "planned"
    tab.get_by_label("Confirmation phrase").fill(f"我确认执行计划 {plan_id}")
    tab.get_by_role("button", name="Apply the plan").click()
    expect(tab.locator("#apply-result")).to_contain_text("Plan applied.")
    expect(tab.locator("#plan-result")).to_contain_text("Applied (2)")
    shoot(tab, "plan-applied")
    assert rig.by_text(first)["status"] == "rejected"
    assert rig.by_text(second)["status"] == "rejected"
    assert console.unexpected(403) == []


def test_the_cleanup_report_becomes_a_plan_applied_with_its_phrase(page: tuple[Page, Console], rig: Rig) -> None:
    tab, console = page
    expired = rig.by_text("部署区域：cn-north-1")
    goto(tab, rig, f"#/b/{BANK}/plans")
    tab.get_by_role("button", name="Make a plan of the 1 plannable candidates").click()
    expect(tab.locator("main h1")).to_contain_text("Plan")
    plan = {"id": tab.locator("main h1 code").inner_text()}  # the plan just made (another test made one too)
    tab.get_by_label("Confirmation phrase").fill(f"我确认执行计划 {plan['id']}")
    tab.get_by_role("button", name="Apply the plan").click()
    # The apply archives through the store: on a loaded 2-core CI machine it took over the default 5 s once.
    expect(tab.locator("#plan-result")).to_contain_text("Applied (1)", timeout=30_000)
    expect(tab.locator("#plan-result")).to_contain_text("Not attempted (0)")
    assert rig.memory(expired["id"])["status"] == "archived"
    assert console.unexpected() == []


def test_archive_then_restore_a_memory(page: tuple[Page, Console], rig: Rig) -> None:
    tab, console = page
    memory = rig.by_text(FACTS[5]["content"])
    goto(tab, rig, f"#/b/{BANK}/m/{memory['id']}")
    tab.get_by_label("Reason (optional)").fill("过时了 — stale")
    tab.get_by_role("button", name="Archive…").click()
    confirm(tab)
    expect(tab.locator("#action-result")).to_contain_text("Archived.")
    assert rig.memory(memory["id"])["status"] == "archived"
    expect(tab.get_by_role("button", name="Restore")).to_be_visible()  # the page reloads it
    tab.get_by_role("button", name="Restore").click()
    expect(tab.locator("#action-result")).to_contain_text("Restored")
    after = rig.memory(memory["id"])
    assert after["status"] == "active"
    (archived,) = [e["reason"] for e in after["events"] if e["action"] == "archive"]
    assert archived.startswith("过时了 — stale")  # the person's words, in the audit
    assert console.unexpected() == []


def test_a_memory_changed_since_the_page_loaded_is_a_409_shown_and_nothing_applied(
    page: tuple[Page, Console], rig: Rig
) -> None:
    tab, console = page
    memory = rig.by_text(FACTS[3]["content"])
    goto(tab, rig, f"#/b/{BANK}/m/{memory['id']}")
    expect(tab.get_by_role("button", name="Archive…")).to_be_visible()
    r = rig.http.post(f"/warden/v1/banks/{BANK}/memories/{memory['id']}/archive", json={"reason": "someone else"})
    assert r.status_code == 200
    tab.get_by_role("button", name="Archive…").click()
    confirm(tab)
    expect(tab.locator("#action-result .message.error")).to_contain_text("archived")
    expect(tab.locator("#action-result")).to_contain_text("It changed since this page loaded")
    events = rig.memory(memory["id"])["events"]
    (archived,) = [e["reason"] for e in events if e["action"] == "archive"]  # once: by the other
    assert archived.startswith("someone else")
    assert console.unexpected(409) == []


def test_a_config_rollback_with_its_preview(page: tuple[Page, Console], rig: Rig) -> None:
    tab, console = page
    assert rig.http.get(f"/v1/default/banks/{BANK}/config").json()["config"]["retain_mission"] == MISSION
    (snapshot,) = rig.http.get(f"/warden/v1/banks/{BANK}/snapshots").json()["items"]
    goto(tab, rig, f"#/b/{BANK}/config?snapshot={snapshot['id']}")
    tab.get_by_role("button", name="Preview a rollback to this snapshot").click()
    expect(tab.locator("#rollback")).to_contain_text("Preview (nothing changed yet)")
    assert not rig.audit(action="config_rollback")  # a preview changes nothing
    tab.get_by_role("button", name="Roll back…").click()
    confirm(tab)
    expect(tab.locator("#rollback .message.ok")).to_contain_text("Rolled back")
    config = rig.http.get(f"/v1/default/banks/{BANK}/config").json()["config"]
    assert config["retain_mission"] != MISSION
    (event,) = rig.audit(action="config_rollback")
    assert event["actor"] == key_id(rig.token)
    shoot(tab, "config-rollback")
    assert console.unexpected() == []


def test_the_audit_tail_shows_a_write_within_a_second(page: tuple[Page, Console], rig: Rig) -> None:
    tab, console = page
    goto(tab, rig, f"#/audit?bank={BANK}")
    expect(tab.locator("#live-state")).to_have_text("live")
    last = rig.http.get("/warden/v1/audit", params={"tail": 1}).json()["last_seq"]
    started = time.monotonic()
    r = rig.http.post(f"/v1/default/banks/{BANK}/memories", json={"items": [{"content": "值班表每周一更新。"}]})
    assert r.status_code == 200
    expect(tab.locator(f'#audit-events tr[data-seq="{last + 1}"]')).to_contain_text("add", timeout=1000)
    assert time.monotonic() - started < 1.0
    expect(tab.locator(f'#audit-events tr[data-seq="{last + 1}"]')).to_contain_text(BANK)
    # Another bank's write is filtered out; the next of this bank's shows.
    rig.http.post("/v1/default/banks/elsewhere/memories", json={"items": [{"content": "Lunch is at noon."}]})
    rig.http.post(f"/v1/default/banks/{BANK}/memories", json={"items": [{"content": "On-call rotates on Monday."}]})
    expect(tab.locator(f'#audit-events tr[data-seq="{last + 3}"]')).to_be_visible()
    expect(tab.locator(f'#audit-events tr[data-seq="{last + 2}"]')).to_have_count(0)
    assert console.unexpected() == []


def test_the_audit_tail_resumes_after_a_drop_without_losing_an_event(page: tuple[Page, Console], rig: Rig) -> None:
    tab, console = page
    resumed_from: list[str] = []
    tab.on(
        "request",
        lambda req: resumed_from.append(req.headers.get("last-event-id", "")) if "/audit/stream" in req.url else None,
    )
    with cut_proxy(rig.url) as proxy:  # the page reaches memwarden through a link the test can cut
        tab.goto(f"http://127.0.0.1:{proxy.port}/warden/ui/#/audit?bank={BANK}")
        expect(tab.locator("#live-state")).to_have_text("live")
        last = rig.http.get("/warden/v1/audit", params={"tail": 1}).json()["last_seq"]
        proxy.cut()
        expect(tab.locator("#live-state")).to_contain_text("disconnected")
        r = rig.http.post(f"/v1/default/banks/{BANK}/memories", json={"items": [{"content": "备份在凌晨两点运行。"}]})
        assert r.status_code == 200  # written while the page was cut off
        expect(tab.locator(f'#audit-events tr[data-seq="{last + 1}"]')).to_be_visible(timeout=10_000)
        expect(tab.locator("#live-state")).to_have_text("live")
        expect(tab.locator("main")).to_contain_text("resumed 1×")
    assert len(resumed_from) == 2
    assert int(resumed_from[1]) <= last  # from the last event seen: the one written meanwhile came in the backlog
    assert tab.locator(f'#audit-events tr[data-seq="{last + 1}"]').count() == 1  # once
    assert [e for e in console.unexpected() if "net::ERR_" not in e] == []  # the cut itself is logged


def test_an_expired_plan_is_refused_and_nothing_applied(browser: Browser, tmp_path: Path) -> None:
    with ui_rig(tmp_path, ttl=0.5) as short_lived:
        memory = short_lived.by_text(FACTS[4]["content"])
        made = short_lived.http.post(
            f"/warden/v1/banks/{BANK}/plans", json={"operations": [{"op": "archive", "memory_id": memory["id"]}]}
        )
        assert made.status_code == 201
        plan = made.json()
        time.sleep(0.6)
        context = open_context(browser, short_lived.token)
        tab = context.new_page()
        console = Console(tab)
        try:
            goto(tab, short_lived, f"#/b/{BANK}/plans/{plan['id']}")
            expect(tab.locator("main")).to_contain_text("This plan has expired")
            tab.get_by_label("Confirmation phrase").fill(plan["phrase"])
            tab.get_by_role("button", name="Apply the plan").click()
            expect(tab.locator("#apply-result .message.error")).to_contain_text("expired")
            assert short_lived.memory(memory["id"])["status"] == "active"
            assert console.unexpected(410) == []
        finally:
            context.close()


def test_a_page_on_another_site_cannot_act_with_the_dashboards_key(browser: Browser, rig: Rig) -> None:
    memory = rig.by_text(FACTS[4]["content"])
    before = rig.http.get("/warden/v1/audit", params={"tail": 1}).json()["last_seq"]
    context = open_context(browser, None)
    try:
        dashboard = context.new_page()  # the dashboard, its key given: it is in this browser …
        dashboard.goto(f"{rig.url}/warden/ui/")
        dashboard.get_by_label("Key", exact=True).fill(rig.token)
        dashboard.get_by_role("button", name="Use this key").click()
        expect(dashboard.locator("main table")).to_contain_text(BANK)
        with serve_in_thread(page_app()) as site:
            other = context.new_page()
            other.goto(site)
            target = f"{rig.url}/warden/v1/banks/{BANK}/memories/{memory['id']}/archive"
            # … but not in another origin's storage, and no cookie carries it: a cross-site request
            # goes without it, and the guard refuses its Origin anyway.
            found = other.evaluate("sessionStorage.getItem('memwarden.key')")
            assert found is None
            answer = other.evaluate(
                """async (url) => {
                  try {
                    const r = await fetch(url, {method: "POST", credentials: "include",
                      headers: {"Content-Type": "application/json"}, body: "{}"});
                    return {status: r.status};
                  } catch (e) { return {error: String(e)}; }
                }""",
                target,
            )
            assert "error" in answer  # the preflight is refused: never sent
            other.evaluate(
                "async (url) => { await fetch(url, {method: 'POST', mode: 'no-cors', credentials: 'include',"
                " headers: {'Content-Type': 'text/plain'}, body: '{}'}); }",
                target,
            )
    finally:
        context.close()
    assert rig.memory(memory["id"])["status"] == "active"
    assert rig.http.get("/warden/v1/audit", params={"tail": 1}).json()["last_seq"] == before


def test_a_phone_width_renders_every_page_without_sideways_scrolling(browser: Browser, rig: Rig) -> None:
    context = open_context(browser, rig.token, PHONE)
    tab = context.new_page()
    console = Console(tab)
    try:
        for route, name in [(f"#/b/{BANK}", "phone-bank"), (f"#/b/{BANK}/review", None), ("#/audit", None)]:
            goto(tab, rig, route)
            wide = tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert wide <= 1, (route, wide)
            if name:
                shoot(tab, name)
        assert console.unexpected() == []
    finally:
        context.close()


def test_the_screenshots_folder_holds_a_picture_of_each_page(browser: Browser) -> None:
    # After the tests above took them (the browser fixture makes it a browser test: not in the fast loop).
    pictures = {p.stem for p in SCREENSHOTS.glob("*.png")}
    assert {"banks", "bank", "memory", "review", "audit", "explain", "plans", "config", "phone-bank"} <= pictures
    assert all(p.stat().st_size > 10_000 for p in SCREENSHOTS.glob("*.png"))


FOCUSED = """() => {
  const e = document.activeElement;
  const name = (e.getAttribute('aria-label') || e.innerText || e.value || '').trim().split('\\n')[0];
  return [e.tagName, name.slice(0, 60), getComputedStyle(e).outlineStyle];
}"""


def test_the_pages_work_from_the_keyboard(page: tuple[Page, Console], rig: Rig) -> None:
    """Tab alone reaches the navigation and a page's controls, each with a visible focus ring, and
    Enter follows a link and presses a button — no mouse."""
    tab, console = page
    goto(tab, rig, f"#/b/{BANK}")
    reached: list[list[str]] = []
    for _ in range(40):
        tab.keyboard.press("Tab")
        reached.append(tab.evaluate(FOCUSED))
    names = [name for _, name, _ in reached]
    assert {"Banks", "Review", "Audit", "Explain", "Plans", "Config"} <= set(names), names
    assert "All memories →" in names  # the page's own links, after the navigation
    # Every focused element shows it (BODY: the focus went round past the page's last control).
    assert [r for r in reached if r[2] == "none" and r[0] != "BODY"] == []
    # Enter on the navigation's "Audit": the audit page, from the keyboard only.
    tab.locator("body").focus()
    for _ in range(40):
        tab.keyboard.press("Tab")
        if tab.evaluate(FOCUSED)[1] == "Audit":
            break
    tab.keyboard.press("Enter")
    expect(tab.locator("main h1")).to_contain_text("Audit")
    # A button pressed with Enter: the chain verification runs and says its result.
    tab.get_by_role("button", name="Verify the chain").focus()
    tab.keyboard.press("Enter")
    expect(tab.locator("main")).to_contain_text("intact")
    assert console.unexpected() == []


def test_a_backend_that_is_down_is_said_on_the_page(browser: Browser, tmp_path: Path) -> None:
    """memwarden in front of a Hindsight that does not answer: the bank page still shows what the
    ledger knows (the write waiting in the outbox) and says the backend's state in words; a page
    that needs the backend (explain) shows the error, not a broken page."""
    import httpx

    from tests.conftest import make_settings, running_warden

    with running_warden(make_settings("http://127.0.0.1:9", data_dir=tmp_path)) as url:  # nothing listens there
        queued = httpx.post(
            f"{url}/v1/default/banks/ops/memories",
            json={"items": [{"content": "The staging cluster runs five nodes in Frankfurt."}]},
            timeout=30,
        )
        assert queued.json()["async"] is True  # accepted into the outbox
        context = open_context(browser, None)
        tab = context.new_page()
        try:
            tab.goto(f"{url}/warden/ui/#/b/ops")
            main = tab.locator("main")
            expect(main).to_contain_text("critical")
            expect(main).to_contain_text("the backend's documents could not be listed")
            expect(main).to_contain_text("wait in the delivery outbox")
            tab.goto(f"{url}/warden/ui/#/b/ops/explain")
            tab.get_by_label("Query").fill("staging cluster")
            tab.get_by_role("button", name="Explain").click()
            expect(tab.locator("main .message.error")).to_contain_text("unreachable")
        finally:
            context.close()
