"""`python -m benchmarks`: the nbgraph against LangGraph table (see benchmarks/compare.py);
`python -m benchmarks looking [...]`: looking at a run against making it (benchmarks/looking.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if sys.argv[1:2] == ["looking"]:
    from looking import main as looking_main

    looking_main(sys.argv[2:])
else:
    from compare import main

    main()
