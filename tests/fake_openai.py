"""Offline OpenAI-compatible stand-in that the real Hindsight server uses as LLM and embedder.

Started by ``scripts/hindsight-up``; stdlib only, so it runs in Hindsight's own venv.
Embeddings: hashed bag of words (stop words dropped, crude stemming), L2-normalised.
Chat: fact extraction returns one fact per sentence after "Content:" (memwarden's own, for the Mem0
front's ``infer``: without the lines' speaker labels, as a model states a fact), and one memory per
sentence of the new messages for Mem0's engine's own extraction (its "Memory Extractor" prompt); consolidation returns one
observation per "[uuid] text" line; tool calls call "done" (or the first tool); memwarden's reflect
(its prompt says "memwarden reflect") answers with the memories that share a word with the question
and cites their ids (in upper case when a directive asks for "uppercase"); anything else "{}".

Usage: python fake_openai.py PORT [DIM]. Tests serve it in a thread instead (:func:`serve_fake_llm`),
where it can also stall, fail, and record what it was sent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

STOP = set(
    "a an the is are was were be been to of in on at for and or but with as by it its this that what "
    "which who whom where when why how do does did i you he she we they my your me us".split()
)
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def embed(text: str, dim: int) -> list[float]:
    v = [0.0] * dim
    words = [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP] or ["<empty>"]
    for t in words:
        t = re.sub(r"(ies|es|s|ing|ed)$", "", t) if len(t) > 4 else t
        h = hashlib.blake2b(t.encode(), digest_size=8).digest()
        v[int.from_bytes(h[:4], "little") % dim] += 1.0 if h[4] & 1 else -1.0
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _words(text: str) -> set[str]:
    return {
        re.sub(r"(ies|es|s|ing|ed)$", "", t) if len(t) > 4 else t
        for t in re.findall(r"[a-z0-9]+", text.lower())
        if t not in STOP
    }


def reflect(system: str, user: str) -> str:
    """memwarden's reflect: the memories (and mental models) sharing a word with the question."""
    question = user.split("## Question\n", 1)[1].split("\n\n## Evidence (JSON)\n", 1)[0]
    evidence = json.loads(user.rsplit("## Evidence (JSON)\n", 1)[1])
    wanted = _words(question)
    used = [m for m in evidence["memories"] if wanted & _words(m["text"])]
    models = [m for m in evidence["mental_models"] if wanted & _words(f"{m['name']} {m['content']}")]
    answer = " ".join([m["text"] for m in used] + [m["content"] for m in models]) or "I don't know."
    if "uppercase" in system.lower():
        answer = answer.upper()
    out: dict[str, Any] = {
        "answer": answer,
        "memory_ids": [m["id"] for m in used],
        "mental_model_ids": [m["id"] for m in models],
    }
    schema = evidence.get("response_schema")
    if isinstance(schema, dict):
        props = schema.get("properties") or {}
        out["structured_output"] = {k: answer for k, v in props.items() if v.get("type") == "string"}
    return json.dumps(out)


def chat(req: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]] | None]:
    user = "\n".join(_text(m.get("content")) for m in req.get("messages", []) if m.get("role") == "user")
    system = "\n".join(_text(m.get("content")) for m in req.get("messages", []) if m.get("role") == "system")
    if "memwarden reflect" in system:
        return reflect(system, user), None
    tools = [t.get("function", {}).get("name") for t in req.get("tools") or []]
    if tools:
        name = "done" if "done" in tools else tools[0]
        args = {"answer": "I don't know."} if name == "done" else {"reason": "fake", "query": user[-200:]}
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        return None, [call]
    if "Memory Extractor" in system and "## New Messages" in user:  # Mem0's own extraction (its engine, infer)
        body = user.split("## New Messages", 1)[1].split("\n## ", 1)[0].strip()
        try:
            said = [m.get("content", "") for m in json.loads(body) if isinstance(m, dict)]
        except ValueError:  # "role: text" lines
            said = [re.sub(r"^\w+:\s*", "", line) for line in body.splitlines()]
        sents = [
            s.strip() for line in said for s in re.split(r"(?<=[.!?])\s+|(?<=[。！？])", line) if len(s.strip()) > 3
        ]
        return json.dumps({"memory": [{"text": s} for s in sents[:10]]}), None
    if "durable facts worth remembering" in system:  # memwarden's fact extraction (the Mem0 front's infer)
        body = user.rsplit("Content:", 1)[1]
        lines = [re.sub(r"^\w+:\s*", "", line).strip() for line in body.splitlines()]  # no speaker labels
        sents = [s.strip() for line in lines for s in re.split(r"(?<=[.!?])\s+|(?<=[。！？])", line) if s.strip()]
        return json.dumps({"facts": sents[:10]}), None
    if "Content:" in user and "xtract" in user:  # retain fact extraction
        body = user.rsplit("Content:", 1)[1].strip()
        sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+|(?<=[。！？])|\n+", body) if len(s.strip()) > 3]
        facts = [
            {
                "what": s,
                "when": "N/A",
                "where": "N/A",
                "who": "N/A",
                "why": "N/A",
                "fact_kind": "conversation",
                "fact_type": "world",
                "entities": [{"text": e} for e in dict.fromkeys(re.findall(r"\b[A-Z][a-z]+\b", s))][:5],
            }
            for s in (sents or [body[:200]])[:10]
        ]
        return json.dumps({"facts": facts}), None
    found = re.findall(r"\[(" + UUID + r")\]\s*(.+?)(?:\n|$)", user)
    if found and "observation" in user.lower():  # consolidation
        creates = [
            {"text": re.sub(r"\s*\(mentioned_at=[^)]*\)\s*$", "", t).strip(), "source_fact_ids": [i]} for i, t in found
        ]
        return json.dumps({"creates": creates, "updates": [], "deletes": []}), None
    return "{}", None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    dim = 384
    # For tests (serve_fake_llm): seconds a chat answer is held back; a status every chat answers
    # (its message echoes the request's Authorization header, as some providers quote a bad key);
    # and every chat request, recorded.
    stall = 0.0
    fail = 0
    seen: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _send(self, code: int, obj: Any) -> None:
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self) -> None:
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        path = self.path.rstrip("/")
        if path.endswith("/embeddings"):
            inp = req.get("input", [])
            inp = [inp] if isinstance(inp, str) else inp
            data = [
                {"object": "embedding", "index": i, "embedding": embed(str(t), self.dim)} for i, t in enumerate(inp)
            ]
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            return self._send(200, {"object": "list", "model": req.get("model"), "usage": usage, "data": data})
        if path.endswith("/chat/completions"):
            self.seen.append({"path": self.path, "authorization": self.headers.get("Authorization"), "body": req})
            if self.stall:
                time.sleep(self.stall)
            if self.fail:
                message = f"refused (authorization: {self.headers.get('Authorization')})"
                return self._send(self.fail, {"error": {"message": message, "type": "invalid_request_error"}})
            content, calls = chat(req)
            msg: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                msg["tool_calls"] = calls
            choice = {"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}
            return self._send(
                200,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": req.get("model", "fake"),
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    "choices": [choice],
                },
            )
        return self._send(404, {"error": {"message": "not found"}})


@contextlib.contextmanager
def serve_fake_llm(*, stall: float = 0.0, fail: int = 0) -> Iterator[tuple[str, type[Handler]]]:
    """The fake on a free loopback port, in a thread: its ``/v1`` base URL, and its handler class
    (``seen``: the chat requests it got; ``stall`` and ``fail`` may be changed while it runs)."""
    handler = type("FakeLLM", (Handler,), {"stall": stall, "fail": fail, "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    Handler.dim = int(sys.argv[2]) if len(sys.argv) > 2 else 384
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
