"""The top layer: the app (``create_app``, its lifespan and the route table: the composition root)
and the command line (``proxy/cli``)."""

from memwarden import __version__

__all__ = ["__version__"]
