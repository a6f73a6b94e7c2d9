"""``/warden/v1`` routes of the self-hosted store.

* ``POST /warden/v1/banks/{bank}/reembed`` — re-embed a bank's memories with the configured
  embedder (after a change of ``local.embedder``); until then the bank refuses writes (409) and its
  old vectors stay out of recall. Resumable.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import self_hosted
from memwarden.governance.state import AppState
from memwarden.store.errors import StoreError
from memwarden.wire.asgi import send_json


async def reembed(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    own = self_hosted(state.memory)
    if own is None:
        await send_json(send, 409, {"detail": "memwarden is not the memory server here (backend is not local)"})
        return
    from memwarden.store.embedder import EmbedderError

    async with state.bank_locks(bank):
        try:
            result = await own.reembed(bank)
        except StoreError as exc:
            await send_json(send, exc.status, {"detail": exc.detail})
            return
        except EmbedderError as exc:
            await send_json(send, 502, {"detail": f"the embedder failed: {exc}; run the re-embed again to resume"})
            return
    await send_json(send, 200, result)
