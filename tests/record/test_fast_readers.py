"""Each document shape has one fast reader beside its schema, and the two agree on the fuzz
cases of `tests/support/file_fuzz.py`: the run file's common step (`log_shape.fits_plain_step`
beside `_STEP`) and the checkpoint's common payload (`checkpoint_shape.fits_plain_payload`
beside `_payload_problems`).

A fast reader answers "yes, well shaped" or "not sure" (then the schema reads it). So, on
every case: what the fast reader accepts the schema accepts, what the schema refuses the fast
reader refuses, and reading with the fast reader first (as `check_step` and
`_check_checkpoint` do) accepts and refuses exactly what the schema alone does. On the valid
files it must say yes to most common steps and payloads, or it would not be a fast reader.
"""

import copy
import random

from nbgraph.checkpoint.sqlite import SqliteSaver
from nbgraph.engine.persistence import checkpoint_shape
from nbgraph.record.files import log_shape
from tests.support.file_fuzz import _THREADS, checkpoint_file, mutate_data, run_documents

MUTATIONS = 40  # edits of each valid step or payload (seeded)


def _edited(rng: random.Random, valid: list) -> list:
    """The valid entries, and `MUTATIONS` one-edit copies of each (`file_fuzz.mutate_data`),
    some with a second edit."""
    cases = list(valid)
    for entry in valid:
        for _ in range(MUTATIONS):
            case, _how = mutate_data(rng, entry)
            if rng.random() < 0.3:
                case, _how = mutate_data(rng, case)
            cases.append(case)
    return cases


def _agree(fast: bool, schema: bool, case: object) -> None:
    assert not fast or schema, f"the fast reader accepts what the schema refuses: {case!r}"[:600]


def test_the_run_files_fast_reader_agrees_with_its_schema_on_the_fuzz_cases():
    steps = [step for doc in run_documents() for step in doc["run"]["steps"]]
    cases = _edited(random.Random(38), steps)
    schema = log_shape._STEP
    accepted = 0
    for case in cases:
        fast, fits = log_shape.fits_plain_step(case), schema.fits(case)
        _agree(fast, fits, case)
        assert fits == (not list(schema.problems(case, "step"))), case
        try:  # the reader the loader uses: the fast reader, then the schema
            log_shape.check_step(copy.deepcopy(case), 0)
            read = True
        except log_shape.LogShapeError:
            read = False
        assert read == fits, case
        accepted += fast
    assert accepted >= len(steps) // 2  # it says yes to the common steps of valid files
    assert len(cases) - sum(map(schema.fits, cases)) > len(cases) // 10  # edits do damage


def test_the_checkpoints_fast_reader_agrees_with_its_schema_on_the_fuzz_cases(tmp_path):
    saver = SqliteSaver(checkpoint_file(str(tmp_path)))
    try:
        payloads = [record.payload for thread in _THREADS for record in saver.history(thread)]
    finally:
        saver.close()
    cases = _edited(random.Random(38), payloads)
    accepted = 0
    for case in cases:
        fast = checkpoint_shape.fits_plain_payload(case)
        fits = not list(checkpoint_shape._payload_problems(case))
        _agree(fast, fits, case)
        accepted += fast
    assert accepted >= len(payloads) // 2
    refused = sum(bool(list(checkpoint_shape._payload_problems(case))) for case in cases)
    assert refused > len(cases) // 10  # the edits do damage
