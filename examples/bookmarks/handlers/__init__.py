"""Hand-written handlers of the bookmarks example (venturi-gen created the stubs once)."""
