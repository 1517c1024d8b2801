"""Put this checkout's root first on ``sys.path``, so ``transpile`` is the local one.

``python benchmarks/run.py`` puts only ``benchmarks/`` on the path; importing
this module first makes ``import transpile`` find the sibling package without
installing it.
"""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
