"""The published JSON Schema of venturi task declarations (``venturi-tasks.schema.json``).

Shipped inside the generator as ``venturi_gen.schemas`` so that ``venturi-gen`` and editors
(yaml-language-server) validate against the very file the generator enforces.
"""
