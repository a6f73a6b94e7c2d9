"""memwarden's front: the ASGI app, routes, request pipeline, CLI."""

from memwarden import __version__

__all__ = ["__version__"]
