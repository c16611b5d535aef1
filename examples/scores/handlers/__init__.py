"""Hand-written handlers of the scores example (venturi-gen created the stubs once)."""
