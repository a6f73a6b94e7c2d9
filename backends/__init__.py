"""Memory backends behind one small interface (``backends.base.MemoryBackend``, with declared
capabilities), and the raw pass-through (``backends.base.PassThrough``) of a backend that speaks
Hindsight's HTTP. The self-hosted store implements the interface in ``store/backend.py``."""
