"""Django settings of the test project: PostgreSQL over psycopg 3 (the shared test server),
and a SQLite database beside it to check what a Django project on SQLite is told."""

from __future__ import annotations

import os
import tempfile
from urllib.parse import urlsplit

_url = urlsplit(os.environ.get("VENTURI_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"))

SECRET_KEY = "venturi-tests-only"
USE_TZ = True
INSTALLED_APPS: list[str] = []
DATABASES = {
    "default": {
        # psycopg 3 is installed (venturi[postgres]), so Django's backend runs on it.
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _url.path.lstrip("/") or "postgres",
        "USER": _url.username or "postgres",
        "PASSWORD": _url.password or "",
        "HOST": _url.hostname or "127.0.0.1",
        "PORT": str(_url.port or 5432),
    },
    "lite": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.path.join(tempfile.gettempdir(), f"venturi-django-{os.getpid()}.sqlite3"),
    },
}
