"""The Hindsight 1.1.0 dialect: its request models and error shapes, the governed routes (retain,
recall, lists, config, other writes, health), the pass-through of every other route, and the
self-hosted store's Hindsight-compatible app."""
