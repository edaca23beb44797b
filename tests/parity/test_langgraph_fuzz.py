"""The random differential fuzz in CI: a fixed set of seeds of `tests/support/fuzz.py`, each a
random graph program run on real LangGraph and on nbgraph, must show no difference that is
not listed as one on purpose (`fuzz.ON_PURPOSE`).

More programs: `python -m tests.support.fuzz --programs 5000 [--seed N]`.
"""

from collections import Counter

import pytest

from tests.support import fuzz

pytestmark = pytest.mark.langgraph

BLOCKS = 12
SEEDS_PER_BLOCK = 10
"""The CI set: seeds 0 .. BLOCKS * SEEDS_PER_BLOCK - 1 (well under a minute)."""


@pytest.mark.parametrize("block", range(BLOCKS))
def test_random_programs_run_alike_on_both_libraries(block, tmp_path):
    differing = []
    for seed in range(block * SEEDS_PER_BLOCK, (block + 1) * SEEDS_PER_BLOCK):
        found = fuzz.run_seed(seed, tmp_path)
        if found.difference is not None and found.on_purpose is None:
            lines = "\n".join(found.program.lines())
            differing.append(f"seed {seed}: {found.difference}\n{lines}")
    assert not differing, "\n\n".join(differing)


def test_the_ci_seeds_reach_every_feature_the_generator_has():
    seen = Counter()
    for seed in range(BLOCKS * SEEDS_PER_BLOCK):
        program = fuzz.generate(seed)
        seen[program.saver] += 1
        seen[f"durability {program.durability}"] += 1
        seen["waiting edge"] += bool(program.waits)
        seen["send"] += any(isinstance(t, tuple) for r in program.routers for t in r.loop)
        for node in program.nodes:
            for feature in ("asks", "fails_once", "defer", "subgraph", "writes_v"):
                seen[feature] += getattr(node, feature)
            seen["command"] += bool(node.command_goto)
        for call in program.calls:
            seen[call if isinstance(call, str) else call[0]] += 1
    wanted = ["none", "memory", "sqlite", "durability exit", "durability sync", "waiting edge",
              "send", "asks", "fails_once", "defer", "subgraph", "writes_v", "command",
              "answer", "plain", "goto", "update"]  # fmt: skip
    assert [name for name in wanted if not seen[name]] == []


def test_a_seed_makes_the_same_program_every_time():
    assert fuzz.generate(7) == fuzz.generate(7)
    assert fuzz.generate(7) != fuzz.generate(8)
