"""Image and file content blocks (issue #34): self-hosted memwarden keeps them as the real Hindsight
1.1.0 does — the same document text with its placeholders, the same attachment list, the same
bytes back — side by side with the real server; a block whose data is not base64 is Hindsight's
400 before anything is judged or written."""

from __future__ import annotations

import base64
import contextlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memwarden.settings import load_settings
from tests.conftest import make_settings, running_warden

pytestmark = [pytest.mark.interop]

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
NOTES = b"Quarterly review notes: the Lisbon office opens in March.\n"


def blocks(text: str) -> list[dict[str, object]]:
    return [
        {"type": "text", "text": text},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
        },
        {
            "type": "file",
            "filename": "review.txt",
            "source": {"type": "base64", "media_type": "text/plain", "data": base64.b64encode(NOTES).decode()},
        },
    ]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """memwarden self-hosted, governance as it comes (the hashing embedder: no model to load)."""
    settings = load_settings(
        environ={},
        overrides={
            "data_dir": str(tmp_path_factory.mktemp("attachments")),
            "local": {"embedder": "hashing"},
            "retention": {"enabled": False},
        },
    )
    with running_warden(settings) as url:
        yield url


def retain(base: str, bank: str, content: object, document_id: str = "d1") -> httpx.Response:
    body = {"items": [{"content": content, "document_id": document_id}]}
    return httpx.post(f"{base}/v1/default/banks/{bank}/memories", json=body, timeout=120)


def test_a_document_with_an_image_and_a_file_reads_back_as_on_hindsight(hindsight_url: str, local: str) -> None:
    bank = f"att_{uuid.uuid4().hex[:8]}"  # the same name on both: the attachments' urls name it
    seen = {}
    for base in (hindsight_url, local):
        r = retain(base, bank, blocks("Alice stood in front of the Brandenburg Gate in Berlin."))
        assert r.status_code == 200, r.text
        assert r.json()["items_count"] == 1
        document = httpx.get(f"{base}/v1/default/banks/{bank}/documents/d1", timeout=30).json()
        got = {k: document[k] for k in ("original_text", "content_hash", "retain_params")}
        got["attachments"] = sorted(document["attachments"], key=lambda a: a["id"])  # Hindsight's order varies
        bodies = {}
        for attachment in document["attachments"]:
            r = httpx.get(f"{base}{attachment['url']}", timeout=30)
            assert r.status_code == 200
            bodies[attachment["kind"]] = (r.content, r.headers["content-type"])
        missing = httpx.get(f"{base}/v1/default/banks/{bank}/attachments/000000000000", timeout=30)
        seen[base] = (got, bodies, missing.status_code, missing.json())
    for ours, theirs in zip(seen[local], seen[hindsight_url], strict=True):
        assert ours == theirs
    got, bodies, _, _ = seen[local]
    assert "\u27e6hs-att:" in got["original_text"]
    assert bodies["image"] == (PNG, "image/png")
    assert bodies["file"][0] == NOTES


@pytest.mark.parametrize("mode", ["self-hosted", "in-front"])
def test_an_attachment_never_runs_as_a_page_of_memwardens_origin(
    local: str, hindsight_url: str, tmp_path: Path, mode: str
) -> None:
    page = b"<script>fetch('/warden/v1/keys')</script>"
    content = [
        {"type": "text", "text": "The incident report for the Lisbon outage is attached."},
        {
            "type": "file",
            "source": {"type": "base64", "media_type": "text/html", "data": base64.b64encode(page).decode()},
        },
    ]
    with contextlib.ExitStack() as stack:
        base = local
        if mode == "in-front":  # Hindsight serves it with nosniff alone; memwarden's route sandboxes it
            base = stack.enter_context(running_warden(make_settings(hindsight_url, data_dir=tmp_path)))
        bank = f"html_{uuid.uuid4().hex[:6]}"
        assert retain(base, bank, content).json()["items_count"] == 1
        (attachment,) = httpx.get(f"{base}/v1/default/banks/{bank}/documents/d1", timeout=30).json()["attachments"]
        r = httpx.get(f"{base}{attachment['url']}", timeout=30)
    assert r.content == page
    assert r.headers.get_list("content-security-policy") == ["default-src 'none'; sandbox"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_deleting_the_document_takes_its_attachments(local: str) -> None:
    assert retain(local, "gone", blocks("The staging cluster moved to eu-west-2 in May.")).json()["items_count"] == 1
    url = httpx.get(f"{local}/v1/default/banks/gone/documents/d1", timeout=30).json()["attachments"][0]["url"]
    assert httpx.get(f"{local}{url}", timeout=30).status_code == 200
    assert httpx.delete(f"{local}/v1/default/banks/gone/documents/d1", timeout=30).status_code == 200
    assert httpx.get(f"{local}{url}", timeout=30).status_code == 404


def test_data_that_is_not_base64_is_refused_as_hindsight_refuses_it_and_nothing_is_written(
    hindsight_url: str, local: str, tmp_path: Path
) -> None:
    bad = [
        {"type": "text", "text": "Bob moved the router to the attic on Monday."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "!!not base64"}},
    ]
    answers = [retain(base, "bad64", bad) for base in (hindsight_url, local)]
    assert [a.status_code for a in answers] == [400, 400]
    assert answers[1].json() == answers[0].json()
    assert "items[0].content[1]: attachment source data is not valid base64" in answers[1].json()["detail"]
    audit = httpx.get(f"{local}/warden/v1/audit", params={"bank": "bad64"}, timeout=30).json()["events"]
    assert [e["action"] for e in audit if e["action"] in ("add", "forward_failed", "reject")] == []
    assert httpx.get(f"{local}/v1/default/banks/bad64/documents/d1", timeout=30).status_code == 404


def test_an_async_retain_keeps_its_attachments(local: str) -> None:
    body = {"items": [{"content": blocks("The Oslo office opens in June."), "document_id": "a1"}], "async": True}
    r = httpx.post(f"{local}/v1/default/banks/queued/memories", json=body, timeout=60)
    assert r.status_code == 200, r.text
    operation = r.json()["operation_id"]
    for _ in range(200):
        status = httpx.get(f"{local}/v1/default/banks/queued/operations/{operation}", timeout=30).json()["status"]
        if status != "pending":
            break
        time.sleep(0.05)
    assert status == "completed"
    (image, _) = httpx.get(f"{local}/v1/default/banks/queued/documents/a1", timeout=30).json()["attachments"][::-1]
    assert httpx.get(f"{local}{image['url']}", timeout=30).content == PNG


@pytest.mark.parametrize(
    ("block", "status", "words"),
    [
        (
            {"type": "image", "source": {"type": "base64", "media_type": "text/html; charset=x", "data": "aGk="}},
            422,
            "media_type",
        ),
        (
            {
                "type": "file",
                "filename": "prod.env",
                "source": {
                    "type": "base64",
                    "media_type": "text/plain",
                    "data": base64.b64encode(
                        b"DATABASE_URL=postgres://app:Zq8vR2kLp9xW4tYb@db.internal/app\n"
                    ).decode(),
                },
            },
            422,
            "secret",
        ),
        (  # not UTF-8 throughout (one Latin-1 byte): read all the same
            {
                "type": "file",
                "source": {
                    "type": "base64",
                    "media_type": "application/octet-stream",
                    "data": base64.b64encode(
                        "# café\nDATABASE_URL=postgres://app:Zq8vR2kLp9xW4tYb@db.internal/app\n".encode("latin-1")
                    ).decode(),
                },
            },
            422,
            "secret",
        ),
        (  # UTF-16 with its byte-order mark
            {
                "type": "file",
                "source": {
                    "type": "base64",
                    "media_type": "text/plain",
                    "data": base64.b64encode(
                        "DATABASE_URL=postgres://app:Zq8vR2kLp9xW4tYb@db.internal/app\n".encode("utf-16")
                    ).decode(),
                },
            },
            422,
            "secret",
        ),
        (  # more text than one request may have judged (governance.max_request_chars, 1,000,000)
            {
                "type": "file",
                "source": {
                    "type": "base64",
                    "media_type": "text/plain",
                    "data": base64.b64encode(b"The Oslo office opens in June.\n" * 40_000).decode(),
                },
            },
            413,
            "max_request_chars",
        ),
    ],
)
def test_a_bad_or_secret_attachment_is_refused_and_nothing_is_written(
    local: str, block: dict[str, object], status: int, words: str
) -> None:
    bank = f"refused_{uuid.uuid4().hex[:6]}"
    content = [{"type": "text", "text": "The deploy notes for the Oslo office are attached."}, block]
    r = retain(local, bank, content)
    assert r.status_code == status, r.text
    assert words in r.text
    assert "Zq8vR2kLp9xW4tYb" not in r.text
    audit = httpx.get(f"{local}/warden/v1/audit", params={"bank": bank}, timeout=30).json()["events"]
    assert [e for e in audit if e["action"] in ("add", "forward_failed", "reject")] == []
