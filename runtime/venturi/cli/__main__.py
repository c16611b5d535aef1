"""``python -m venturi.cli``: the ``venturi`` command without the console script."""

from __future__ import annotations

import sys

from venturi.cli import main

sys.exit(main())
