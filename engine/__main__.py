"""`python -m engine` runs the engine command."""

from __future__ import annotations

import sys

from engine.tools.cli import main

sys.exit(main())
