"""Shared test configuration."""

from __future__ import annotations

pytest_plugins = ["tests.pg_fixtures", "tests.pg_server"]
