"""What the tests (``tests/``) and the benchmarks (``bench/``) share: serving an ASGI app on a real
loopback port (``testing.loopback``) and the Hindsight stand-in with fault injection
(``testing.standin``). Neither imports the other; this folder is not installed with memwarden."""

from testing.one_name import install as _one_name

_one_name()  # `import db.audit` fails: it is `memwarden.db.audit` (testing/one_name.py)
