"""Example 1: fetch bookmarked pages in the background (the task model's FetchBookmark).

Shows a dedup key with ``replace`` on collision, a permanent failure (HTTP 410),
a retried one, and a run's attachment. ``python -m examples.bookmarks.demo``
runs it against a local web server.
"""
