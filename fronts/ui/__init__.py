"""The dashboard at ``/warden/ui``: a page and its files, a view over the ``/warden/v1`` API."""
