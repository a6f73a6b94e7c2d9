"""Fronts: one per API dialect memwarden speaks, and the ASGI helpers they share.

``fronts/hindsight``: Hindsight's dialect (request models, the governed routes, the pass-through,
the self-hosted store's Hindsight-compatible app); ``fronts/admin``: ``/warden/v1``. A handler
parses, calls ``governance``, and shapes the answer in its dialect (see ARCHITECTURE.md).
"""
