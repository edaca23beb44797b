"""`python -m benchmarks`: the nbgraph against LangGraph table (see benchmarks/compare.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from compare import main

main()
