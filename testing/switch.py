"""A backend that goes down and comes back: a TCP relay on a loopback port in front of a real
server, switched off (its port refuses connections, the open ones are cut) and on again.

    with Switch("http://127.0.0.1:8888") as switch:   # switch.url: the relay
        switch.down()   # connection refused, in-flight requests cut mid-way
        switch.up()     # the same port again
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from types import TracebackType
from urllib.parse import urlsplit

from testing.loopback import free_port


class Switch:
    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self.connections = 0

    def __enter__(self) -> Switch:
        self._thread.start()
        self.up()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.down()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def _run(self, coro: object) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)  # type: ignore[arg-type]

    def up(self) -> None:
        self._run(self._listen())

    def down(self) -> None:
        """Refuse new connections and cut the open ones (a crashed or unplugged backend)."""
        self._run(self._close())

    async def _listen(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port, reuse_address=True)

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._open.add(writer)  # cut by down() even while the backend's side is still connecting
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        if self._server is None or writer.transport.is_closing():
            # switched off while connecting to the backend: this connection was cut, not relayed
            writer.transport.abort()
            up_writer.transport.abort()
            return
        self._open.add(up_writer)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while chunk := await src.read(65536):
                    dst.write(chunk)
                    await dst.drain()
            with contextlib.suppress(OSError):
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._open.difference_update((writer, up_writer))
