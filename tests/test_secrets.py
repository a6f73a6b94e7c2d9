from __future__ import annotations

import pytest

from memwarden.policies.secrets import find_secrets, mask


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "private_key"),
        ("key sk-proj-a8F3kLmN0pQrStUvWxYz1234567890abcd", "openai_key"),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "anthropic_key"),
        ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "github_token"),
        ("AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
        ("xoxb-1234567890-abcdefghij", "slack_token"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"),
        ("postgres://admin:s3cretPass@db.internal:5432/app", "connection_string"),
        ("password = hunter2hunter2", "password"),
        ("数据库密码：Xk9#mPq2!vL", "password"),
        ("api_key: 9f8e7d6c5b4a39281726354", "credential"),
        ("密钥是 Zx81Kq0PmW33sTt", "credential"),
        ("Authorization: Bearer abcdefghijklmnop1234", "bearer_header"),
        ("token aZ3kQ9pL2mX8vB7nC4wE6rT1yU5iO0sDfGh", "high_entropy"),
    ],
)
def test_secrets_are_found(text: str, kind: str) -> None:
    found = find_secrets(text)
    assert [f.kind for f in found][:1] == [kind]
    masked = mask(text, found)
    assert f"[REDACTED:{kind}]" in masked
    secret = text[found[0].start : found[0].end]
    assert secret not in masked


@pytest.mark.parametrize(
    "text",
    [
        "6/1 决定用密钥认证不用密码",
        "已配置 API_KEY",
        "password is stored in 1Password under 'ci-bot'",
        "the token is expired",
        "password = ********",
        "api_key: <your-key-here>",
        "commit 3f2a9c1d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49 fixed it",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "max_tokens: 4096",
    ],
)
def test_non_secrets_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []
