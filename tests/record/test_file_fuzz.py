"""Mutated run files and checkpoint files end in a named error, never a raw one or a hang,
and the process's peak memory stays within a bound (hostile but valid files among those
mutated; each hostile file alone, under RLIMIT_AS: `test_hostile_files.py`).

The harness is `tests/support/file_fuzz.py`; CI runs a few hundred seeded cases (about a
second), `NBGRAPH_FUZZ_CASES=20000` (or `python -m tests.support.file_fuzz --cases 20000`)
runs more by hand.
"""

import os

from tests.support.file_fuzz import fuzz


def test_every_mutated_file_is_read_or_refused_by_name():
    cases = int(os.environ.get("NBGRAPH_FUZZ_CASES", "600"))
    counts = fuzz(cases, seed=int(os.environ.get("NBGRAPH_FUZZ_SEED", "0")))
    assert counts.cases == cases
    assert counts.named > cases // 4  # the edits do damage: most files are refused
    assert not counts.hangs, counts.hangs
    assert not counts.raw, "\n".join(f"{kind}\n  after {edit}" for kind, edit in counts.raw)
    assert {"RunFileError", "CheckpointFileError"} <= set(counts.kinds)
    assert counts.grown_mb < 256, counts.grown_mb  # (hostile files among them: bounded)
