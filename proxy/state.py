"""What the app shares across requests, built by the lifespan."""

from __future__ import annotations

from dataclasses import dataclass

from backends.base import MemoryBackend
from backends.hindsight import HindsightBackend
from backends.transport import BackendHTTP
from proxy.settings import Settings


@dataclass
class AppState:
    settings: Settings
    http: BackendHTTP
    backend: HindsightBackend  # raw pass-through and health
    memory: MemoryBackend  # JSON calls of the governed routes: the backend behind its wrappers
    read_retries: int
