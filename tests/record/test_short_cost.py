"""`short(value, width)` reads only as much of a value as it shows: the items it touches
do not grow with the value (a property over containers of any size), a long str or bytes
is sliced before its repr, and its text is the repr's own beginning."""

import dataclasses
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from nbgraph.record.text import short

touched = [0]


class Counted:
    """An item that counts how often its repr is asked for."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __repr__(self) -> str:
        touched[0] += 1
        return "c"

    def __hash__(self) -> int:
        return self.n


@dataclasses.dataclass
class Holder:
    items: list
    more: int = 1


def _shapes(items: list) -> dict:
    return {
        "list": items,
        "tuple": tuple(items),
        "set": set(items),
        "frozenset": frozenset(items),
        "dict": {i: item for i, item in enumerate(items)},
        "nested": [items, [items]],
        "dataclass": Holder(items),
    }


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(0, 200_000),
    width=st.integers(1, 200),
    kind=st.sampled_from(["list", "tuple", "set", "frozenset", "dict", "nested", "dataclass"]),
)
def test_the_items_short_touches_do_not_grow_with_the_value(size, width, kind):
    value = _shapes([Counted(i) for i in range(size)])[kind]
    touched[0] = 0
    text = short(value, width)
    assert len(text) <= width
    assert touched[0] <= 2 * width + 4  # (what the width shows, whatever the size)


@settings(max_examples=80, deadline=None)
@given(
    text=st.text(max_size=300) | st.binary(max_size=300),
    width=st.integers(2, 120),
    repeat=st.integers(1, 3000),
)
def test_a_sliced_str_or_bytes_reads_as_its_repr_cut(text, width, repeat):
    value = text * repeat
    whole = " ".join(repr(value).split())
    shown = short(value, width)
    assert len(shown) <= width
    if len(whole) <= width:
        assert shown == whole
    quotes = ("'", '"') if isinstance(value, str) else (b"'", b'"')
    if len(whole) > width and not any(q in value for q in quotes):  # (a slice: other quotes)
        assert shown.endswith("…") and whole.startswith(shown[:-1].rstrip())


def test_short_of_a_10_mb_value_costs_what_a_short_one_costs():
    for value in (
        "x" * 10_000_000,
        b"y" * 10_000_000,
        frozenset(range(600_000)),
        Holder(list(range(1_000_000))),
    ):
        started = time.perf_counter()
        for _ in range(200):
            short(value, 120)
        assert time.perf_counter() - started < 0.5, type(value)  # (a whole repr: ~10 s)
