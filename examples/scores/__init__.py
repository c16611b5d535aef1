"""Example 3: a content-aware merge with ``With``.

Requests to recompute scores arrive in bursts, each naming a few users of a
league. Rather than queueing one job per request, a request that finds a job
of its league still pending is folded into it: the user ids are unioned and
the more urgent of the two urgencies becomes the job's priority. The job
keeps its id and journal, and records each merge. ``python -m examples.scores.demo``.
"""
