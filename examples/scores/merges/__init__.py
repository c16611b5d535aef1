"""Hand-written merge functions of the scores example (venturi-gen created the stubs once)."""
