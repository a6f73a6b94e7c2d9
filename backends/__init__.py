"""Memory backends behind one small interface (``backends.base.MemoryBackend``)."""
