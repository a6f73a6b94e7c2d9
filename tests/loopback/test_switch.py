"""The test relay that plays a backend going down (``testing/switch.py``): a connection accepted
just before the switch goes off is cut too, even while the relay is still connecting to the backend
(a race that let a write through an "unplugged" backend and made an outbox test flaky under load)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest

import testing.switch as switch_module
from testing.switch import Switch


@pytest.fixture
def backend() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on loopback that records what reaches it."""
    received: list[bytes] = []
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    while data := conn.recv(65536):
                        received.append(data)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join(timeout=5)
    server.close()


def test_a_connection_accepted_while_the_backend_is_being_reached_is_cut_by_down(
    backend: tuple[int, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, received = backend
    reached = asyncio.open_connection

    async def slow_open_connection(*args: object, **kwargs: object) -> object:
        await asyncio.sleep(0.5)  # the backend is slow to answer the relay's connect
        return await reached(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(switch_module.asyncio, "open_connection", slow_open_connection)
    with Switch(f"http://127.0.0.1:{port}") as switch:
        client = socket.create_connection(("127.0.0.1", switch.port), timeout=3)
        time.sleep(0.1)  # accepted by the relay, which is still connecting to the backend
        switch.down()
        time.sleep(0.6)  # the relay's connect to the backend completes after down()
        try:
            client.sendall(b"POST /memories HTTP/1.1\r\n\r\n")
            answer = client.recv(1024)
        except OSError:
            answer = b""
        finally:
            client.close()
        time.sleep(0.3)
    assert answer == b""  # cut, not relayed
    assert received == []  # nothing reached the backend after the switch went off


def test_a_switch_that_is_on_relays_what_the_client_sends(backend: tuple[int, list[bytes]]) -> None:
    port, received = backend
    with Switch(f"http://127.0.0.1:{port}") as switch:
        client = socket.create_connection(("127.0.0.1", switch.port), timeout=3)
        client.sendall(b"hello")
        deadline = time.monotonic() + 5
        while not received and time.monotonic() < deadline:
            time.sleep(0.05)
        client.close()
    assert b"".join(received) == b"hello"
