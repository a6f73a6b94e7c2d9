"""In-process tests: memwarden's ASGI app driven through httpx's ASGITransport (lifespan run); no socket, no process."""
