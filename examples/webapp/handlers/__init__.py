"""Hand-written handlers of the web app example (venturi-gen created the stubs once)."""
