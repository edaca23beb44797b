"""Tests for nbgraph.schema: reading state schemas into fields, and generating schemas."""

from __future__ import annotations

import dataclasses
import operator
import typing
import uuid
from typing import Annotated, Any, NotRequired, Required, TypedDict

import pydantic
import pytest
import typing_extensions

from nbgraph.messages import Message
from nbgraph.reducers import get_reducer, register_reducer
from nbgraph.schema import (
    FieldSpec,
    SchemaInfo,
    generate_state_schema,
    is_typeddict,
    pydantic_updates,
    read_schema,
    schema_kind,
)
from nbgraph.types import Ephemeral, EphemeralValue, RemainingSteps


def read(cls: Any, **kwargs: Any) -> tuple[SchemaInfo, list[str]]:
    """Read `cls`, returning the schema info and the problems found."""
    problems: list[str] = []
    info = read_schema(cls, problems=problems, **kwargs)
    return info, problems


def reducer_names(info: SchemaInfo) -> dict[str, str]:
    return {name: spec.reducer_name for name, spec in info.fields.items()}


# --- the four kinds of schema ---------------------------------------------------------------


class TypedState(TypedDict):
    log: Annotated[list, "append"]
    total: Annotated[int, operator.add]
    status: str
    scratch: Annotated[str, Ephemeral]
    note: Annotated[str, EphemeralValue]
    remaining: RemainingSteps


class ModelState(pydantic.BaseModel):
    log: Annotated[list, "append"] = []
    total: Annotated[int, operator.add] = 0
    status: str = ""
    scratch: Annotated[str, Ephemeral] = ""
    remaining: RemainingSteps = 0


@dataclasses.dataclass
class DataState:
    log: Annotated[list, "append"] = dataclasses.field(default_factory=list)
    total: Annotated[int, operator.add] = 0
    status: str = ""
    scratch: Annotated[str, Ephemeral] = ""
    remaining: RemainingSteps = 0


EXPECTED_REDUCERS = {
    "log": "append",
    "total": "add",
    "status": "overwrite",
    "scratch": "ephemeral",
    "remaining": "managed",
}


def test_typeddict_fields_and_reducers() -> None:
    info, problems = read(TypedState)

    assert problems == []
    assert info.kind == "typeddict"
    assert info.cls is TypedState
    assert reducer_names(info) == {**EXPECTED_REDUCERS, "note": "ephemeral"}
    assert info.keys == ("log", "total", "status", "scratch", "note", "remaining")


@pytest.mark.parametrize(
    ("cls", "kind"), [(ModelState, "pydantic"), (DataState, "dataclass")], ids=["pydantic", "dc"]
)
def test_model_and_dataclass_fields_and_reducers(cls: type, kind: str) -> None:
    info, problems = read(cls)

    assert problems == []
    assert info.kind == kind
    assert reducer_names(info) == EXPECTED_REDUCERS


def test_reducer_by_name_is_the_registered_reducer() -> None:
    info, _ = read(TypedState)

    assert info.fields["log"].reducer is get_reducer("append")


def test_reducer_callable_is_kept_and_does_not_take_missing() -> None:
    info, _ = read(TypedState)
    total = info.fields["total"]

    assert total.reducer.fn is operator.add
    assert total.reducer.takes_missing is False


def test_field_types_lose_their_annotated_metadata() -> None:
    info, _ = read(TypedState)

    assert info.fields["log"].type is list
    assert info.fields["total"].type is int
    assert info.fields["status"].type is str
    assert info.fields["remaining"].type is int


def test_unannotated_field_is_overwrite_with_no_reducer_and_no_start() -> None:
    status = read(TypedState)[0].fields["status"]

    assert status.reducer is None
    assert status.reducer_name == "overwrite"
    assert status.initial is None
    assert (status.ephemeral, status.managed, status.private) == (False, False, False)


@pytest.mark.parametrize("name", ["scratch", "note"])
def test_ephemeral_and_ephemeral_value_mark_the_field(name: str) -> None:
    spec = read(TypedState)[0].fields[name]

    assert spec.ephemeral is True
    assert spec.managed is False


def test_ephemeral_instance_marks_the_field_too() -> None:
    info, problems = read(dict, reducers={"tmp": Ephemeral()})

    assert problems == []
    assert info.fields["tmp"].ephemeral is True


def test_remaining_steps_is_managed() -> None:
    spec = read(TypedState)[0].fields["remaining"]

    assert spec.managed is True
    assert spec.ephemeral is False
    assert spec.reducer is None


def test_dict_schema_reads_reducers_and_ephemeral() -> None:
    info, problems = read(
        dict,
        reducers={"log": "append", "total": operator.add, "seen": ("union", Ephemeral)},
        ephemeral={"tmp"},
    )

    assert problems == []
    assert info.kind == "dict"
    assert reducer_names(info) == {
        "log": "append",
        "total": "add",
        "seen": "ephemeral",
        "tmp": "ephemeral",
    }
    assert info.fields["seen"].reducer is get_reducer("union")
    assert info.fields["tmp"].reducer is None


def test_dict_schema_ephemeral_keeps_the_fields_reducer() -> None:
    info, problems = read(dict, reducers={"log": "append"}, ephemeral=["log"])

    assert problems == []
    assert info.fields["log"].ephemeral is True
    assert info.fields["log"].reducer is get_reducer("append")


def test_reducers_argument_on_a_typeddict_is_a_problem() -> None:
    _, problems = read(TypedState, reducers={"status": "append"})

    assert len(problems) == 1
    assert "reducers=" in problems[0]


def test_something_that_is_not_a_schema_is_a_problem() -> None:
    class PlainClass:
        n: int

    _, problems = read(PlainClass)

    assert len(problems) == 1
    assert "PlainClass" in problems[0]
    assert "not a TypedDict" in problems[0]


def test_a_type_without_fields_is_one_root_channel_as_in_langgraph() -> None:
    info, problems = read(Annotated[list, operator.add])
    assert problems == []
    assert info.kind == "root"
    assert [(f.name, f.reducer_name) for f in info.fields.values()] == [("__root__", "add")]
    assert info.build({"__root__": [1]}) == [1]
    assert info.updates_from([2]) == [("__root__", [2])]
    info, problems = read(int)
    assert (info.kind, problems, info.fields["__root__"].reducer) == ("root", [], None)


@pytest.mark.parametrize(
    ("cls", "kind"),
    [
        (TypedState, "typeddict"),
        (ModelState, "pydantic"),
        (DataState, "dataclass"),
        (dict, "dict"),
        (int, None),
        (list[int], None),
    ],
)
def test_schema_kind(cls: Any, kind: str | None) -> None:
    assert schema_kind(cls) == kind


def test_private_marks_every_field() -> None:
    info, _ = read(TypedState, private=True)

    assert all(spec.private for spec in info.fields.values())


def test_required_and_not_required_do_not_hide_the_reducer() -> None:
    class Partial(TypedDict, total=False):
        log: NotRequired[Annotated[list, "append"]]
        total: Required[Annotated[int, operator.add]]

    info, problems = read(Partial)

    assert problems == []
    assert reducer_names(info) == {"log": "append", "total": "add"}
    assert info.fields["log"].type is list
    assert info.fields["log"].initial is list


def test_an_unresolvable_annotation_is_a_problem_not_a_silent_overwrite() -> None:
    class Unresolvable(TypedDict):
        log: Annotated[list, "append"]
        thing: NoSuchTypeAnywhere  # noqa: F821

    info, problems = read(Unresolvable)

    assert len(problems) == 1
    assert "Unresolvable.thing" in problems[0]
    assert "NoSuchTypeAnywhere" in problems[0]
    assert info.fields["log"].reducer is get_reducer("append")


# --- starting values -------------------------------------------------------------------------


class NeedsArguments:
    def __init__(self, value: int) -> None:
        self.value = value


class StartingValues(TypedDict):
    items: Annotated[list, "append"]
    words: Annotated[list[str], "append"]
    total: Annotated[int, operator.add]
    text: Annotated[str, operator.add]
    table: Annotated[dict[str, int], "merge"]
    odd: Annotated[NeedsArguments, lambda old, new: new]
    maybe: Annotated[list | None, "append"]
    plain: list


@pytest.mark.parametrize(
    ("name", "empty"),
    [("items", []), ("words", []), ("total", 0), ("text", ""), ("table", {})],
)
def test_reducer_field_of_a_buildable_type_starts_empty(name: str, empty: Any) -> None:
    spec = read(StartingValues)[0].fields[name]

    assert spec.initial is not None
    assert spec.initial() == empty
    assert type(spec.initial()) is type(empty)


def test_each_starting_value_is_a_fresh_object() -> None:
    spec = read(StartingValues)[0].fields["items"]

    assert spec.initial() is not spec.initial()


@pytest.mark.parametrize("name", ["odd", "maybe"])
def test_reducer_field_of_a_type_that_cannot_be_built_empty_has_no_start(name: str) -> None:
    info, problems = read(StartingValues)

    assert problems == []
    assert info.fields[name].initial is None


def test_field_without_a_reducer_has_no_start_even_if_buildable() -> None:
    assert read(StartingValues)[0].fields["plain"].initial is None


def test_dict_schema_fields_have_no_declared_type_so_no_start() -> None:
    info, _ = read(dict, reducers={"log": "append"})

    assert info.fields["log"].initial is None


# --- Annotated metadata is read by type, not position ---------------------------------------


class WithPydanticMetadata(pydantic.BaseModel):
    before: Annotated[list, pydantic.Field(default_factory=list), "append"]
    after: Annotated[list, "append", pydantic.Field(default_factory=list)]
    bounded: Annotated[int, pydantic.Field(ge=0), operator.add] = 0
    described: Annotated[str, pydantic.Field(description="just a description")] = ""


def test_pydantic_field_metadata_is_ignored_next_to_a_reducer() -> None:
    info, problems = read(WithPydanticMetadata)

    assert problems == []
    assert reducer_names(info) == {
        "before": "append",
        "after": "append",
        "bounded": "add",
        "described": "overwrite",
    }


def test_ephemeral_after_a_reducer_is_still_seen() -> None:
    class S(TypedDict):
        first: Annotated[list, Ephemeral, "append"]
        second: Annotated[list, "append", Ephemeral]

    info, problems = read(S)

    assert problems == []
    for name in ("first", "second"):
        assert info.fields[name].ephemeral is True
        assert info.fields[name].reducer is get_reducer("append")


AppendList = Annotated[list, "append"]


def test_nested_annotated_metadata_is_read() -> None:
    class S(TypedDict):
        log: Annotated[AppendList, Ephemeral]

    info, problems = read(S)

    assert problems == []
    assert info.fields["log"].reducer is get_reducer("append")
    assert info.fields["log"].ephemeral is True


def test_a_reducer_registered_in_a_test_is_found_by_name() -> None:
    name = f"test_schema_keep_{uuid.uuid4().hex}"
    register_reducer(name)(lambda old, new: new)
    # The functional form: a class body's string annotations could not see the local `name`.
    S = TypedDict("S", {"value": Annotated[int, name]})  # noqa: UP013

    info, problems = read(S)

    assert problems == []
    assert info.fields["value"].reducer_name == name


# --- problems are collected, not raised ------------------------------------------------------


class Troubled(TypedDict):
    unknown: Annotated[list, "no_such_reducer_for_schema_tests"]
    doubled: Annotated[list, "append", operator.add]
    one_arg: Annotated[list, lambda old: old]
    fine: Annotated[list, "append"]


def test_every_problem_in_a_schema_is_collected_without_raising() -> None:
    info, problems = read(Troubled)

    assert len(problems) == 3
    assert set(info.fields) == {"unknown", "doubled", "one_arg", "fine"}
    assert info.fields["fine"].reducer is get_reducer("append")


def test_unregistered_reducer_name_lists_the_registered_ones() -> None:
    _, problems = read(Troubled)
    [problem] = [p for p in problems if "Troubled.unknown" in p]

    assert "no_such_reducer_for_schema_tests" in problem
    for name in ("append", "add", "merge", "overwrite", "union"):
        assert name in problem


def test_two_reducers_on_one_field_are_a_problem_naming_both() -> None:
    _, problems = read(Troubled)
    [problem] = [p for p in problems if "Troubled.doubled" in p]

    assert "append" in problem
    assert "add" in problem


def test_one_argument_reducer_lambda_is_a_problem() -> None:
    _, problems = read(Troubled)
    [problem] = [p for p in problems if "Troubled.one_arg" in p]

    assert "two arguments" in problem


def test_dict_schema_problems_name_the_field() -> None:
    _, problems = read(dict, reducers={"log": "no_such_reducer_for_schema_tests"})

    assert len(problems) == 1
    assert "'log'" in problems[0]


def test_problems_are_appended_to_the_given_list() -> None:
    problems = ["an earlier problem"]

    read_schema(Troubled, problems=problems)

    assert problems[0] == "an earlier problem"
    assert len(problems) == 4


# --- SchemaInfo: build and updates_from ------------------------------------------------------


def test_build_gives_the_schema_form() -> None:
    values = {"log": ["a"], "total": 1, "status": "ok", "scratch": "", "remaining": 3}

    model = read(ModelState)[0].build(values)
    data = read(DataState)[0].build(values)
    typed = read(TypedState)[0].build(values)

    assert isinstance(model, ModelState)
    assert model.log == ["a"]
    assert isinstance(data, DataState)
    assert data.total == 1
    assert typed == values


def test_updates_from_a_model_or_dataclass_instance() -> None:
    model_info, data_info = read(ModelState)[0], read(DataState)[0]

    assert ("status", "done") in model_info.updates_from(ModelState(status="done"))
    assert ("log", ["x"]) in data_info.updates_from(DataState(log=["x"]))
    assert model_info.updates_from({"status": "done"}) is None
    assert data_info.updates_from(ModelState()) is None


# --- pydantic_updates ------------------------------------------------------------------------


class Optional3(pydantic.BaseModel):
    required: int
    maybe: str | None = None
    also_maybe: list | None = None
    named: str = "default"


def test_pydantic_updates_skip_untouched_none_fields() -> None:
    updates = dict(pydantic_updates(Optional3(required=1)))

    assert updates == {"required": 1, "named": "default"}


def test_pydantic_updates_keep_none_set_explicitly() -> None:
    updates = dict(pydantic_updates(Optional3(required=1, maybe=None)))

    assert updates == {"required": 1, "maybe": None, "named": "default"}


def test_pydantic_updates_keep_values_that_are_not_none() -> None:
    updates = pydantic_updates(Optional3(required=1, also_maybe=["x"], named="n"))

    assert updates == [("required", 1), ("also_maybe", ["x"]), ("named", "n")]


def test_pydantic_updates_keep_none_when_the_default_is_not_none() -> None:
    class NotNoneDefault(pydantic.BaseModel):
        value: int | None = 5

    model = NotNoneDefault.model_construct(_fields_set=set(), value=None)

    assert pydantic_updates(model) == [("value", None)]


# --- generate_state_schema -------------------------------------------------------------------


def test_generated_schema_always_has_messages_with_append_messages() -> None:
    S = generate_state_schema()

    assert typing.is_typeddict(S)
    info, problems = read(S)
    assert problems == []
    assert info.fields["messages"].reducer is get_reducer("append_messages")
    assert info.fields["messages"].type == list[Message]


def test_generated_schema_reads_types_and_reducers() -> None:
    S = generate_state_schema(count=(int, "add"), title=str, tags=(list, operator.add))

    info, problems = read(S)

    assert problems == []
    assert reducer_names(info) == {
        "messages": "append_messages",
        "count": "add",
        "title": "overwrite",
        "tags": "add",
    }
    assert info.fields["count"].type is int
    assert info.fields["count"].initial() == 0


@pytest.mark.parametrize("tp", [str, int, float, bool, list, tuple, dict])
def test_generated_schema_accepts_each_allowed_type(tp: type) -> None:
    S = generate_state_schema(value=tp)

    assert read(S)[0].fields["value"].type is tp


@pytest.mark.parametrize("bad_name", ["not-valid", "1st", "has space"])
def test_generated_schema_refuses_a_name_that_is_not_an_identifier(bad_name: str) -> None:
    with pytest.raises(ValueError, match=repr(bad_name)):
        generate_state_schema(**{bad_name: str})


@pytest.mark.parametrize("tp", [set, bytes, list[str], object, FieldSpec])
def test_generated_schema_refuses_a_type_that_is_not_allowed(tp: Any) -> None:
    with pytest.raises(ValueError, match="'odd_field'"):
        generate_state_schema(odd_field=tp)


def test_generated_schema_refuses_a_type_inside_a_tuple_spec_too() -> None:
    with pytest.raises(ValueError, match="'odd_field'"):
        generate_state_schema(odd_field=(set, "union"))


def test_generated_schema_reports_every_bad_field_at_once() -> None:
    with pytest.raises(ValueError) as caught:
        generate_state_schema(**{"bad-name": str, "bad_type": set})

    assert "'bad-name'" in str(caught.value)
    assert "'bad_type'" in str(caught.value)


def test_generated_schema_with_an_unregistered_reducer_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no_such_reducer_for_schema_tests"):
        generate_state_schema(count=(int, "no_such_reducer_for_schema_tests"))


def test_generated_schema_accepts_a_field_called_name() -> None:
    S = generate_state_schema(name=str)

    assert read(S)[0].fields["name"].type is str


def test_generated_schema_messages_cannot_lose_append_messages() -> None:
    try:
        S = generate_state_schema(messages=list)
    except ValueError as error:
        assert "messages" in str(error)
    else:
        assert read(S)[0].fields["messages"].reducer is get_reducer("append_messages")


# --- typing_extensions.TypedDict (what most of LangGraph's docs use) ----------------------------


class ExtensionsState(typing_extensions.TypedDict):
    log: typing_extensions.Annotated[list, "append"]
    total: typing_extensions.Required[Annotated[int, operator.add]]
    status: typing_extensions.NotRequired[str]
    frozen: typing_extensions.ReadOnly[Annotated[list, operator.add]]
    remaining: RemainingSteps


class ExtensionsChild(ExtensionsState, total=False):
    extra: typing_extensions.NotRequired[Annotated[str, Ephemeral]]


def test_a_typing_extensions_typeddict_is_read_like_a_typing_one() -> None:
    info, problems = read(ExtensionsState)

    assert problems == [] and info.kind == "typeddict" and schema_kind(ExtensionsState)
    assert reducer_names(info) == {
        "log": "append",
        "total": "add",
        "status": "overwrite",
        "frozen": "add",
        "remaining": "managed",
    }
    assert info.fields["status"].type is str and info.fields["frozen"].type is list


def test_a_typing_extensions_typeddict_subclass_keeps_its_parents_fields() -> None:
    info, problems = read(ExtensionsChild)

    assert problems == [] and list(info.fields) == [*ExtensionsState.__annotations__, "extra"]
    assert info.fields["extra"].ephemeral


def test_is_typeddict_knows_both_kinds_and_nothing_else() -> None:
    assert is_typeddict(ExtensionsState) and is_typeddict(TypedState)
    assert not is_typeddict(dict) and not is_typeddict(DataState) and not is_typeddict(3)
