"""Hand-written handlers of the catalog example (venturi-gen created the stubs once)."""
