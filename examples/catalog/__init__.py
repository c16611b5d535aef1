"""Example 2: a multi-step job that checkpoints in its carry and pauses between steps.

``ReindexCatalog`` indexes one page of products per run, records the next page
in its carry and returns a pause. A pause is not a failure: no failure is
recorded, the retry backstop is untouched, and a worker that stops between
pages leaves the job pending with its carry, for the next worker to resume.
``python -m examples.catalog.demo`` shows a restart half-way.
"""
