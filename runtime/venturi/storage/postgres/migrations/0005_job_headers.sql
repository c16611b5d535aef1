-- Headers: a JSON object of strings that hooks store with a job when it is
-- enqueued (venturi.otel's trace context) and hand back with each run. NULL
-- for jobs enqueued without hooks, which is most of them.

ALTER TABLE {schema}.jobs ADD COLUMN headers text;
