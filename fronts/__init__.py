"""Fronts: one per API dialect memwarden speaks, and the ASGI helpers they share.

``fronts/hindsight``: Hindsight's request models and the self-hosted store's Hindsight-compatible
app. The governed handlers still live in ``memwarden.proxy`` (see ARCHITECTURE.md).
"""
