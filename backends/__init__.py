"""Memory backends behind one small interface (``backends.base.MemoryBackend``, with declared
capabilities; what only the self-hosted store answers is ``backends.base.SelfHosted``), and the raw
pass-through (``backends.base.PassThrough``) of a backend that speaks Hindsight's HTTP. Hindsight's
dialect itself — its JSON, request models and OpenAPI document — is ``hindsight_json.py``,
``hindsight_models.py`` and ``hindsight_openapi.json``. The self-hosted store implements the
interface in ``store/backend.py``."""
