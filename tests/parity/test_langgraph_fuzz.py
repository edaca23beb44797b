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


def test_the_command_runs_more_programs_and_says_what_differs(capsys, monkeypatch):
    """`python -m tests.support.fuzz --programs N --seed S`: runs the N seeds from S, prints
    the count, and exits 1 with the differing seeds named when a program differs."""
    assert fuzz.main(["--programs", "3", "--seed", "0", "--quiet"]) == 0
    assert "3 programs (seeds 0..2)" in capsys.readouterr().out

    def differing(seed, folder=None):
        program = fuzz.generate(seed)
        return fuzz.Outcome(seed, "call 0: output / a", None, {}, {}, program)

    monkeypatch.setattr(fuzz, "run_seed", differing)
    monkeypatch.setattr(fuzz, "_print_outcome", lambda found: print(f"program {found.seed}"))
    assert fuzz.main(["--programs", "2", "--seed", "5", "--show", "1"]) == 1
    out = capsys.readouterr().out
    assert "seed 5: call 0: output / a" in out and "2 differ" in out and "program 5" in out
