"""Image and file content blocks (issue #34): self-hosted memwarden keeps them as the real Hindsight
1.1.0 does — the same document text with its placeholders, the same attachment list, the same
bytes back — side by side with the real server; a block whose data is not base64 is Hindsight's
400 before anything is judged or written."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memwarden.settings import load_settings
from tests.conftest import running_warden

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
        got = {k: document[k] for k in ("original_text", "content_hash", "attachments", "retain_params")}
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


def test_an_attachment_never_runs_as_a_page_of_memwardens_origin(local: str) -> None:
    page = b"<script>fetch('/warden/v1/keys')</script>"
    content = [
        {"type": "text", "text": "The incident report for the Lisbon outage is attached."},
        {
            "type": "file",
            "source": {"type": "base64", "media_type": "text/html", "data": base64.b64encode(page).decode()},
        },
    ]
    assert retain(local, "html", content).json()["items_count"] == 1
    (attachment,) = httpx.get(f"{local}/v1/default/banks/html/documents/d1", timeout=30).json()["attachments"]
    r = httpx.get(f"{local}{attachment['url']}", timeout=30)
    assert r.content == page
    assert r.headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert r.headers["x-content-type-options"] == "nosniff"


def test_deleting_the_document_takes_its_attachments(local: str) -> None:
    assert retain(local, "gone", blocks("The staging cluster moved to eu-west-2 in May."))
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
