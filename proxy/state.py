"""What the app shares across requests, built by the lifespan."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from backends.hindsight import HindsightBackend
from proxy.settings import Settings


@dataclass
class AppState:
    settings: Settings
    client: httpx.AsyncClient
    backend: HindsightBackend
    read_retries: int
