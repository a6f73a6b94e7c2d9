"""memwarden's front: the ASGI app, routes, request pipeline, CLI."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("memwarden")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+source"
