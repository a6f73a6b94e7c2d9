"""The self-hosted store's own HTTP server: Hindsight 1.1.0's API over :class:`~memwarden.store.local.LocalStore`
(``app.create_local_app``). memwarden's Hindsight front passes to it what it does not govern, in
process, as it passes to a real Hindsight over the network; it is not a front of the proxy."""
