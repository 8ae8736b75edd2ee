"""python -m bench: the side-by-side comparison `make bench` runs (see bench/compare.py)."""

from __future__ import annotations

from bench.compare import main

raise SystemExit(main())
