"""Example 4: venturi from a web app (FastAPI with AsyncQueue, Flask with Queue)."""
