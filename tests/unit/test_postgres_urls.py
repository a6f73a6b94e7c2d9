"""A PostgreSQL URL's secrets — the password in its user part, ``password`` and ``sslpassword``
parameters (libpq's) — never in what memwarden shows: messages, logs, the audit chain."""

from __future__ import annotations

from memwarden.db.postgres import passwords, redacted, scrub

URL = "postgresql://memwarden:hunter2@db.internal:5432/state?sslmode=verify-full&sslpassword=keypass&password=again"


def test_every_secret_of_a_url_is_found_and_masked() -> None:
    assert passwords(URL) == ["hunter2", "keypass", "again"]
    shown = redacted(URL)
    for secret in ("hunter2", "keypass", "again"):
        assert secret not in shown
    assert shown.startswith("postgresql://memwarden:***@db.internal:5432/state?")
    assert "sslmode=verify-full" in shown
    said = scrub('FATAL: password authentication failed (sslpassword "keypass", user memwarden:hunter2)', URL)
    assert "keypass" not in said
    assert "hunter2" not in said


def test_a_url_without_secrets_is_shown_as_it_is() -> None:
    plain = "postgresql://memwarden@db.internal/state?sslmode=require"
    assert passwords(plain) == []
    assert redacted(plain) == plain
