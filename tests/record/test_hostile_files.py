"""Hostile but valid files (`tests/support/hostile_files.py`) are read or refused by name
within a memory cap and a time bound, each in a child process under `RLIMIT_AS`: what
docs/VALUES.md ("What loading a file may cost") promises, checked by running it."""

import re
import sys

import pytest

from tests.support.hostile_files import MEMORY_CAP, REFUSED, SECONDS, load_capped, write_all

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc: Linux")
pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    paths = write_all(str(tmp_path_factory.mktemp("hostile")))
    return load_capped(paths, MEMORY_CAP, timeout=180)


def test_each_hostile_file_loads_or_is_refused_within_the_cap_and_time(outcomes):
    for name, (outcome, seconds) in outcomes.items():
        assert outcome == "loaded" or outcome.startswith("refused: "), (name, outcome)
        assert seconds < SECONDS, (name, seconds)


def test_a_replay_past_a_bound_is_refused_naming_field_step_and_bound(outcomes):
    for name in REFUSED:
        outcome = outcomes[name][0]
        assert "ReplayLimitError" in outcome, (name, outcome)
        assert re.search(r"step \d+, field 'a'", outcome), (name, outcome)
        assert "at most" in outcome or "units plus" in outcome, (name, outcome)


def test_a_transcript_and_a_long_union_load_quickly(outcomes):
    for name in ("a 2 KB text added 300 times (a transcript)", "union of two 20,000-item lists"):
        assert outcomes[name][0] == "loaded"
        assert outcomes[name][1] < 3
