"""What the app shares across requests, built by the lifespan."""

from __future__ import annotations

from dataclasses import dataclass

from backends.hindsight import HindsightBackend
from backends.transport import BackendHTTP
from proxy.settings import Settings


@dataclass
class AppState:
    settings: Settings
    http: BackendHTTP
    backend: HindsightBackend
    read_retries: int
