"""`python -m app` runs the `cairn` console script."""

from __future__ import annotations

import sys

from app.main import main

sys.exit(main())
