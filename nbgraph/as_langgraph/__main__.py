"""`python -m nbgraph.as_langgraph SCRIPT.py [ARGS]`: a LangGraph script run on nbgraph.

The script runs as `python SCRIPT.py [ARGS]` would run it (`__name__ == "__main__"`,
`sys.argv`, its folder first on `sys.path`), with `import langgraph.X` loading `nbgraph.X`.
`-m MODULE [ARGS]` runs a module the same way. Under `python -i`, the script's names are
there afterwards (`app.last_run`).
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

from nbgraph.as_langgraph import install

USAGE = """\
usage: python -m nbgraph.as_langgraph SCRIPT.py [ARGS...]
       python -m nbgraph.as_langgraph -m MODULE [ARGS...]

Runs a LangGraph program unchanged on nbgraph: `import langgraph.X` loads `nbgraph.X`."""


def main(argv: list[str]) -> dict[str, Any]:
    """Run the script or module `argv` names; return its global names."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        raise SystemExit(2 if not argv else 0)
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            raise SystemExit(2)
        install()
        sys.argv = argv[1:]
        return runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    script = argv[0]
    if not os.path.exists(script):
        print(f"{sys.executable}: can't open file {os.path.abspath(script)!r}", file=sys.stderr)
        raise SystemExit(2)
    install()
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    return runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    globals().update(
        (name, value)
        for name, value in main(sys.argv[1:]).items()
        if not (name.startswith("__") and name.endswith("__"))
    )
