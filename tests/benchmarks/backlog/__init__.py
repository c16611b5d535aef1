"""Two versions of one task for the check-backlog benchmark (each imported by its own process)."""
