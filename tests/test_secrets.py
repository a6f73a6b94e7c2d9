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
        # Split, encoded, said in words.
        ("the key id is AKIA IOSF ODNN 7EXA MPLE", "aws_access_key"),
        ("AKIA-IOSF-ODNN-7EXA-MPLE", "aws_access_key"),
        ("copy this: aZ3k Q9pL 2mX8 vB7n C4wE 6rT1", "split_key"),
        ("creds QUtJQUlPU0ZPRE5ON0VYQU1QTEU= (base64)", "encoded_secret"),
        ("login pass is hunter2", "password"),
        ("the wifi password for the guest network is Tr0ub4dor", "password"),
        ("root pw is s3cr3tPw", "password"),
        ("The passphrase was 'sunshine'", "password"),
        ("my PIN is 4821", "pin"),
        ("银行卡密码是123456", "password"),
        ("mwk_0123456789ab_C2HhSpbKWTEu16LLnGm1EjR4A0g8s32r445RgdgN8a4", "memwarden_key"),
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
        # Near misses of the split, encoded and spoken detectors.
        "AKIA IS A BANK CODE FOR THE US",
        "ABCD-1234-EFGH-5678",
        "Use GPT4o with Claude3 and Llama3 for Qwen2 eval",
        "Order 4x A100 80GB and 2x H100 for the cluster",
        "SGVsbG8gd29ybGQgdGhpcyBpcyBhIHRlc3Q=",
        "the mountain pass is 2300m",
        "pass the salt",
        "the password is required",
        "The password for the staging DB is in Vault",
        "PIN the issue to the board",
        "密码是必须的",
    ],
)
def test_non_secrets_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []
