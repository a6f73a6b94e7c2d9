"""Unit tests: pure functions and services called directly (a fake backend at most); no app, no socket, no process."""
