"""memwarden: a governance proxy for AI-agent memory.

One installed name. Its layers (see ARCHITECTURE.md) live in folders at the repository's top and
are mapped into this namespace: ``memwarden.policies``, ``memwarden.backends``, ``memwarden.store``,
``memwarden.proxy``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("memwarden")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+source"
