"""`python -m nbgraph.as_langgraph SCRIPT.py [ARGS]`: a LangGraph script run on nbgraph.

The script runs as `python SCRIPT.py [ARGS]` would run it — in a module `__main__` of its own,
with `sys.argv` and its folder first on `sys.path` — with `import langgraph.X` loading
`nbgraph.X`. `-m MODULE [ARGS]` runs a module as `python -m MODULE` would. An error is shown
with the program's own traceback (the runner's frames left out); under `python -i`, the
program's names are there afterwards (`graph.last_run`).
"""

from __future__ import annotations

import builtins
import io
import os
import runpy
import sys
import types
from typing import Any

from nbgraph.as_langgraph import BEFORE_THE_PROGRAM, LangGraphAlreadyImportedError, install

USAGE = """\
usage: python -m nbgraph.as_langgraph SCRIPT.py [ARGS...]
       python -m nbgraph.as_langgraph -m MODULE [ARGS...]

Runs a LangGraph program unchanged on nbgraph: `import langgraph.X` loads `nbgraph.X`."""

_RUNNER_FILES = {os.path.abspath(__file__), "<frozen runpy>", runpy.__file__}


def _program_traceback(kind: type, error: BaseException, tb: Any) -> None:
    """`sys.excepthook` for the program: its traceback without the runner's frames."""
    while tb is not None and tb.tb_frame.f_code.co_filename in _RUNNER_FILES:
        tb = tb.tb_next
    sys.__excepthook__(kind, error.with_traceback(tb), tb)


def _fresh_main() -> dict[str, Any]:
    """A new module `__main__` in `sys.modules`, as Python makes one for a program."""
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    return main.__dict__


def main(argv: list[str]) -> None:
    """Run the script or module `argv` names, with `import langgraph` loading nbgraph."""
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        print(USAGE, file=sys.stdout if argv and argv[0] != "-m" else sys.stderr)
        raise SystemExit(0 if argv and argv[0] != "-m" else 2)
    if argv[0] != "-m" and not os.path.exists(argv[0]):
        print(f"{sys.executable}: can't open file {os.path.abspath(argv[0])!r}", file=sys.stderr)
        raise SystemExit(2)
    try:
        install(BEFORE_THE_PROGRAM)
    except LangGraphAlreadyImportedError as refused:
        print(f"nbgraph.as_langgraph: {refused}", file=sys.stderr)
        raise SystemExit(1) from None
    sys.excepthook = _program_traceback
    namespace = _fresh_main()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy._run_module_as_main(argv[1], alter_argv=True)  # what `python -m` runs
        return
    path = os.path.abspath(argv[0])
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(path)
    namespace.update(__file__=path, __spec__=None, __loader__=None, __package__=None)
    with io.open_code(path) as source:
        code = compile(source.read(), path, "exec")
    exec(code, namespace)


if __name__ == "__main__":
    main(sys.argv[1:])
