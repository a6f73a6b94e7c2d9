"""Fronts: one per API dialect memwarden speaks, and what they share (auth, middleware, errors).

``fronts/hindsight``: Hindsight's dialect (the governed routes, the pass-through); ``fronts/mem0``:
Mem0's; ``fronts/admin``: ``/warden/v1``; ``fronts/ui``: the dashboard's files. The self-hosted
store's own Hindsight server is ``store/server``, the JSON and ASGI plumbing ``wire/``. A handler
parses, calls ``governance``, and shapes the answer in its dialect (see ARCHITECTURE.md).
"""
