"""Browser tests: the dashboard in Debian's chromium driven by Playwright for Python; marked slow."""
