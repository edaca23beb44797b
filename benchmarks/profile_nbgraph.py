"""The compare workloads on nbgraph alone, for a profiler.

Run: `.venv/bin/python -m cProfile -s cumtime benchmarks/profile_nbgraph.py loop 100000`
(or `sends 10000 --repeat 5`, `memory-saver 1000 --repeat 5`, `agent 200`, `agent-langchain
200`, `history 1000`, `history-sqlite 1000`, `subgraph 1000`).
The graph is built and run once before the runs that matter (imports and first-use
caches), so `--repeat` makes those runs dominate the profile.
"""

import argparse
import tempfile

from compare import (
    agent_case,
    api_nbgraph,
    history_case,
    loop_case,
    sends_case,
    subgraph_case,
)

WORKLOADS = {
    "loop": lambda api, size: loop_case(api, size),
    "memory-saver": lambda api, size: loop_case(api, size, "memory"),
    "sqlite-saver": lambda api, size: loop_case(api, size, "sqlite", tempfile.mkdtemp()),
    "sends": sends_case,
    "agent": agent_case,
    "history": lambda api, size: history_case(api, size, "memory", ""),
    "history-sqlite": lambda api, size: history_case(api, size, "sqlite", tempfile.mkdtemp()),
    "agent-langchain": lambda api, size: agent_case(api, size, langchain=True),
    "subgraph": subgraph_case,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("size", type=int)
    parser.add_argument("--repeat", type=int, default=1, help="runs after the warm-up")
    args = parser.parse_args()
    case = WORKLOADS[args.workload](api_nbgraph(), args.size)
    case.call()
    for _ in range(args.repeat):
        case.call()


if __name__ == "__main__":
    main()
