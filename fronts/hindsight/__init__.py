"""The Hindsight 1.1.0 dialect: the governed routes (retain, recall, lists, config, other writes,
health) and the pass-through of every other route. Its request models are
``backends/hindsight_models.py`` (the self-hosted store's own Hindsight server, ``store/server``,
validates with them too)."""
