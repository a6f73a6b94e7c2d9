"""Interop tests: the real Hindsight 1.1.0 server (started by the harness, scripts/hindsight-up) and the official clients (hindsight-client, mem0ai); marked interop and slow."""
