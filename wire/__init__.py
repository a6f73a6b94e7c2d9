"""The bytes on the wire, below every layer that serves HTTP: a request's JSON read within bounds
(depth, values, content type) and an answer written at the ASGI level. Used by the fronts and by
the self-hosted store's own Hindsight server; it knows nothing of governance."""
