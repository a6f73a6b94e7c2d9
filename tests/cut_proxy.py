"""A TCP forwarder on loopback whose connections a test can cut at once: what a dropped network
looks like to a browser (an open stream ends), while new connections go through again."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


class CutProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.server.getsockname()[1]
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self.lock:
                self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def cut(self) -> None:
        """Close every connection open now."""
        with self.lock:
            dropped, self.open = self.open, []
        for s in dropped:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self.server.close()
        self.cut()


@contextlib.contextmanager
def cut_proxy(url: str) -> Iterator[CutProxy]:
    proxy = CutProxy(int(url.rsplit(":", 1)[1]))
    try:
        yield proxy
    finally:
        proxy.close()
