"""Shared value types: MISSING, Send, Command, Overwrite, Mutation."""

import copy
import pickle

from nbgraph.types import MISSING, Command, Mutation, Overwrite, Send


def test_missing_is_one_falsy_value_that_survives_copies_and_pickles():
    assert not MISSING
    assert repr(MISSING) == "MISSING"
    assert copy.deepcopy(MISSING) is MISSING and copy.copy(MISSING) is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING
    assert type(MISSING)() is MISSING


def test_send_compares_by_node_and_argument_even_when_unhashable():
    assert Send("w", {"a": [1]}) == Send("w", {"a": [1]})
    assert Send("w", {"a": 1}) != Send("v", {"a": 1})
    assert hash(Send("w", {"a": [1]})) == hash(Send("w", {}))


def test_command_goto_targets_as_a_list():
    assert Command().goto_targets() == []
    assert Command(goto="a").goto_targets() == ["a"]
    assert Command(goto=Send("w", 1)).goto_targets() == [Send("w", 1)]
    assert Command(goto=["a", Send("w", 1)]).goto_targets() == ["a", Send("w", 1)]
    assert Command[str](goto="typed").goto == "typed"


def test_overwrite_holds_its_value():
    assert Overwrite([1]).value == [1]


def test_mutation_subclass_applies_and_refuses_to_combine_by_default():
    class Double(Mutation):
        def __init__(self, field):
            self.field = field

        def apply(self, value):
            return value * 2

    double = Double("n")
    assert double.apply(4) == 8
    assert double.combine(Double("n")) is None
    assert repr(double) == "Double('n')"
