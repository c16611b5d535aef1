"""The worker state type of the state_import case, for type-checking its generated stub."""

from __future__ import annotations


class AppState:
    """Shared state of a worker: clients, pools, settings."""
