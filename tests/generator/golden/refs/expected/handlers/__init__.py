"""Your modules for venturi tasks; venturi-gen creates stubs here, never overwrites them."""
