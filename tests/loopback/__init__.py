"""Loopback tests: real HTTP servers on 127.0.0.1 (memwarden, the Hindsight stand-in, an echo upstream) or real processes (`memwarden serve`, the CLI, mkdocs); marked slow."""
