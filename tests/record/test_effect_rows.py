"""Effect rows are built by name, in one module: an `Effect` cannot be made positionally (a
new column would shift every later cell silently), and only `record/effects.py` builds one."""

import copy
import inspect
import pickle
import re
from pathlib import Path

import pytest

from nbgraph.primitives import MISSING
from nbgraph.record.effects import EFFECT_COLUMNS, Effect, cleared_effect, effect_row

PACKAGE = Path(__file__).parents[2] / "nbgraph"


def test_an_effect_cannot_be_built_by_position():
    cells = (1, "n", "replace", 0, [("a", 1)], ["a"], 1, True, True, False, False, False,
             False, "merge:1", "")  # fmt: skip
    assert len(cells) == len(EFFECT_COLUMNS)  # (every column given: only the position is wrong)
    with pytest.raises(TypeError):
        Effect(*cells)


def test_an_effect_built_by_name_holds_each_cell_in_its_column():
    row = Effect(step=3, field="n", reducer="add", before=1, writes=[("a", 2)], writers=["a"],
                 after=3, changed=True, applied=True, point="merge:3")  # fmt: skip
    assert dict(zip(EFFECT_COLUMNS, row, strict=True)) == {
        "step": 3, "field": "n", "reducer": "add", "before": 1, "writes": [("a", 2)],
        "writers": ["a"], "after": 3, "changed": True, "applied": True, "conflict": False,
        "overwrite_bypass": False, "dropped_key": False, "root_reset": False,
        "point": "merge:3", "winner": "",
    }  # fmt: skip


def test_an_effect_survives_pickle_and_copy():
    row = cleared_effect(2, "tmp", "x", "merge:2")
    for again in (pickle.loads(pickle.dumps(row)), copy.copy(row), copy.deepcopy(row)):
        assert type(again) is Effect and again == row and again.after is MISSING
    assert row._replace(step=5).step == 5


def test_an_unknown_column_is_an_error():
    with pytest.raises(TypeError, match="colour"):
        Effect(step=1, field="n", reducer="r", before=0, writes=[], writers=[], after=0,
               changed=False, applied=True, colour="red")  # fmt: skip


def test_only_the_effects_module_builds_an_effect():
    builders = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"\b(Effect|effect_row)\(", path.read_text(encoding="utf-8"))
    )
    assert builders == ["record/effects.py"]


def test_the_builder_puts_each_keyword_in_its_own_column():
    # (a column added to `_EffectRow` and `effect_row` in different orders fails here)
    assert list(inspect.signature(effect_row).parameters) == list(EFFECT_COLUMNS)
    row = effect_row(**{name: f"<{name}>" for name in EFFECT_COLUMNS})
    assert [row.cell(name) for name in EFFECT_COLUMNS] == [f"<{n}>" for n in EFFECT_COLUMNS]
