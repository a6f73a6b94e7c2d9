"""The Hindsight 1.1.0 dialect: its request models and error shapes, and the self-hosted store's
Hindsight-compatible app."""
