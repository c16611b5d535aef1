"""A minimal Django project for the tests of ``enqueue(conn=...)`` in Django's transactions."""
