"""Runnable venturi examples, importable from the repository root (``examples.bookmarks``, ...).

Each example is a package: its declarations (``tasks.venturi.yaml``), the code
venturi-gen generated from them (``generated/``, checked in, never edited), the
handlers written by hand (``handlers/``), its worker's shared state, and
``app.py`` with the ``make_worker`` factory that ``venturi worker`` runs.
"""
