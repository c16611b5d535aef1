"""venturi-gen: validate YAML task declarations and generate typed Python for venturi."""
