"""`Run.from_langgraph` of threads whose nodes run subgraphs: each subgraph's run, read from
its `checkpoint_ns` in the same saver and thread, is a subrun of the task that ran it
(`run.subruns`, `.parent`, `.task`), nested to any depth, paused ones too. The proof: every
checkpointed program of tests/parity/test_langgraph_subgraph_checkpoints.py (in
subgraph_checkpoint_programs.py) runs on LangGraph and on nbgraph, and each thread imported
from LangGraph agrees with nbgraph's record of it rebuilt from its saver
(`Run.from_checkpointer`), subruns included (effects, steps, final state). Then every other
differential program, replayed with its runs recorded (tests/record/replay.py).
"""

import operator
from typing import Annotated, Any, TypedDict

import pytest

import nbgraph
from nbgraph.checkpoint.subthreads import SEP
from tests.parity.subgraph_checkpoint_programs import PROGRAMS as SUBGRAPH_PROGRAMS
from tests.record.import_views import capture_apps, checkpointed, deep_differences, deep_view
from tests.record.replay import differential_programs, program_differences
from tests.support.harness import api_for

pytestmark = pytest.mark.langgraph

THREAD = {"configurable": {"thread_id": "t"}}


def both_subgraph_threads(program: Any) -> list[tuple[str, dict, dict, Any, Any]]:
    """The program run on LangGraph and on nbgraph; each thread of each checkpointed app,
    imported from LangGraph and rebuilt from nbgraph's saver: `(thread, view, view, run,
    run)`."""
    lg_api, nb_api = api_for("langgraph"), api_for("nbgraph")
    lg_apps, nb_apps = capture_apps(lg_api), capture_apps(nb_api)
    program(lg_api)
    program(nb_api)
    lg_roots, nb_roots = checkpointed(lg_apps), checkpointed(nb_apps)
    assert len(lg_roots) == len(nb_roots)
    found = []
    for lg_app, nb_app in zip(lg_roots, nb_roots, strict=True):
        for thread_id in nb_app.checkpointer.threads():
            if SEP in thread_id:  # a subgraph's thread: read through its parent's
                continue
            config = {"configurable": {"thread_id": thread_id}}
            imported = nbgraph.Run.from_langgraph(lg_app, config)
            ours = nbgraph.Run.from_checkpointer(nb_app.checkpointer, thread_id, graph=nb_app)
            found.append((thread_id, deep_view(imported), deep_view(ours), imported, ours))
    return found


SUBGRAPH_HISTORY_CANNOT_TELL = {
    "refusals_program": (
        ["run:steps", "run:tree", "run:subruns"],
        "the thread is left paused inside the subgraph: nbgraph's record rebuilt from its "
        "saver keeps no paused step (as THREAD_DIFFERENCES in test_langgraph_import.py), "
        "LangGraph's history keeps the paused task, so the import shows it and its paused "
        "subrun, as nbgraph's live run does (test_a_paused_nested_subgraph_then_resumed)",
    ),
    "replay_and_fork_program": (
        ["run/3:0:sub:tree", "run/3:0:sub:forks"],
        "a replay or fork runs the subgraph again in a new namespace on LangGraph (its task "
        "id comes from the checkpoint), while nbgraph's step-based task id names the same "
        "namespace each time, so nbgraph's rebuilt subrun has the earlier runs as forks",
    ),
}
"""Programs whose imported threads differ from nbgraph's record, with the keys and why."""

CANNOT_IMPORT = {
    "root_checkpointer_modes_program": "no graph of it is compiled with a checkpointer "
    "(checkpointer=True alone is refused by both, a parent without one keeps no history)",
}
"""Programs with no thread to import, and why (each checked to have none)."""


@pytest.mark.parametrize("program", SUBGRAPH_PROGRAMS, ids=lambda p: p.__name__)
def test_imported_subgraph_threads_agree_with_nbgraphs_record(program):
    pytest.importorskip("langgraph")
    expected, _why = SUBGRAPH_HISTORY_CANNOT_TELL.get(program.__name__, ([], ""))
    threads = both_subgraph_threads(program)
    assert bool(threads) == (program.__name__ not in CANNOT_IMPORT)
    for thread_id, imported, ours, run, _ in threads:
        assert deep_differences(imported, ours) == expected, (thread_id, imported, ours)
        if program.__name__ == "checkpointer_true_program":
            assert any("checkpointer=True" in note for note in run.warnings)


# --- one program, step by step ---------------------------------------------------------------


class S(TypedDict):
    log: Annotated[list, operator.add]


def nested(api: Any, saver: Any) -> Any:
    """`sub` runs `x` then `deep`, a subgraph whose `ask` asks; then `b`."""
    deepest = api.StateGraph(S).add_node("y", lambda s: {"log": ["y"]})
    deepest.add_node("ask", lambda s: {"log": [api.interrupt("q?")]})
    deepest.add_edge(api.START, "y").add_edge("y", "ask")
    inner = api.StateGraph(S).add_node("x", lambda s: {"log": ["x"]})
    inner.add_node("deep", deepest.compile()).add_edge(api.START, "x").add_edge("x", "deep")
    outer = api.StateGraph(S).add_node("sub", inner.compile())
    outer.add_node("b", lambda s: {"log": ["b"]})
    outer.add_edge(api.START, "sub").add_edge("sub", "b")
    return outer.compile(checkpointer=saver)


def test_a_paused_nested_subgraph_then_resumed():
    pytest.importorskip("langgraph")
    lg_api = api_for("langgraph")
    app = nested(lg_api, lg_api.saver())
    app.invoke({"log": []}, THREAD)
    paused = nbgraph.Run.from_langgraph(app, THREAD)
    assert paused.status == "interrupted"
    (sub,) = paused.subruns
    assert (sub.parent, sub.task, sub.status) == (paused, "1:0:sub", "interrupted")
    (deep,) = sub.subruns
    assert (deep.task, deep.status, deep.output) == ("2:0:deep", "interrupted", {"log": ["x", "y"]})
    asked = [t for t in deep.log.tasks() if t.interrupts]
    assert [(t.node, t.interrupts[0].value) for t in asked] == [("ask", "q?")]
    app.invoke(lg_api.Command(resume="A"), THREAD)
    done = nbgraph.Run.from_langgraph(app, THREAD)
    assert done.output == {"log": ["x", "x", "y", "A", "b"]}
    assert done.subruns[0].subruns[0].output == {"log": ["x", "y", "A"]}
    assert list(done.steps.subruns) == [[0], []]
    assert not [w for w in done.warnings if "subgraph" in w]
    nb_api = api_for("nbgraph")
    ours = nested(nb_api, nb_api.saver())
    ours.invoke({"log": []}, THREAD)
    ours.invoke(nb_api.Command(resume="A"), THREAD)
    rebuilt = nbgraph.Run.from_checkpointer(ours.checkpointer, "t", graph=ours)
    assert deep_differences(deep_view(done), deep_view(rebuilt)) == []
    assert len(done.compare(rebuilt)) == 0
    assert len(done.subruns[0].compare(rebuilt.subruns[0])) == 0


def test_a_paused_subgraph_agrees_with_nbgraphs_live_run():
    pytest.importorskip("langgraph")
    lg_api, nb_api = api_for("langgraph"), api_for("nbgraph")
    app = nested(lg_api, lg_api.saver())
    app.invoke({"log": []}, THREAD)
    imported = nbgraph.Run.from_langgraph(app, THREAD)
    live = nested(nb_api, nb_api.saver()).run({"log": []}, THREAD)
    assert live.status == imported.status == "interrupted"
    assert deep_differences(deep_view(imported), deep_view(live)) == []


def test_a_subgraph_that_keeps_no_checkpoints_is_said():
    pytest.importorskip("langgraph")
    lg_api = api_for("langgraph")
    inner = lg_api.StateGraph(S).add_node("x", lambda s: {"log": ["x"]})
    inner.add_edge(lg_api.START, "x")
    outer = lg_api.StateGraph(S).add_node("sub", inner.compile(checkpointer=False))
    app = outer.add_edge(lg_api.START, "sub").compile(checkpointer=lg_api.saver())
    app.invoke({"log": []}, THREAD)
    run = nbgraph.Run.from_langgraph(app, THREAD)
    assert run.output == {"log": ["x"]}
    assert run.subruns == []
    assert any("'sub'" in w and "checkpointer=False" in w for w in run.warnings)


# --- every differential program: each top-level call recorded on both ----------------------


# Why a program's imported records differ from nbgraph's (or why there is nothing to import).
NO_RUN = "no graph runs (a drawing, the store, a function called directly): nothing to import"
NBGRAPH_ONLY = "it runs nbgraph only (an nbgraph feature, not a differential run)"
PAIRING = (
    "the calls cannot be paired one to one: batch runs them on threads at once, a chain or a "
    "refused context calls the app another way on each engine"
)
APPLY = (
    "an error raised while LangGraph applies a step's writes (InvalidUpdateError, a "
    "MessageTypeError of the reducer) or a recursion limit: the history keeps no error and "
    "shows the step still to run (status 'interrupted', with a note), as HISTORY_CANNOT_TELL"
)
SAVER_RECORD = (
    "the thread ends failed or paused: nbgraph's record rebuilt from its saver keeps no failed "
    "or paused step, LangGraph's history keeps it, so the import shows it as nbgraph's live "
    "run does (THREAD_DIFFERENCES in test_langgraph_import.py)"
)
PARENT = (
    "Command.PARENT: LangGraph's subgraph history keeps no trace of the node that handed the "
    "command up (it raised before a checkpoint), so the subrun shows that node still to run "
    "(status 'interrupted', with a note) where nbgraph's shows it and status 'to_parent'"
)
UNDETECTED = (
    "a graph built inside a node's function: LangGraph does not detect it as a subgraph, so "
    "its checkpoints cannot be read with its graph; not imported, said in run.warnings"
)
NS_REUSE = (
    "a replay runs the subgraph again in a new namespace on LangGraph, in the same one on "
    "nbgraph (step-based task ids), whose rebuilt subrun then has the earlier runs as forks"
)
OWN_THREAD = "a subgraph compiled with checkpointer=True is not imported (said in run.warnings)"
DROPPED = (
    "keys a subgraph's parent lacks: LangGraph drops them before writing, so the history has "
    "no dropped_key rows (as node_returns_unknown_keys in HISTORY_CANNOT_TELL)"
)
UPDATE = (
    "update_state of a past checkpoint: LangGraph keeps no writes for it, so they are read "
    "from the values it made (an Overwrite of the list, with a note)"
)
SERDE = "LangGraph's saver keeps tuples as lists (its serializer): the values read back differ"
CONFIG = (
    "the nodes write what they see of their config, and the saver the proof gives LangGraph's "
    "call adds checkpoint keys to it"
)

NOT_AGREEING = {
    "test_langgraph_subgraphs::parallel_program": (["run:status"], APPLY),
    "test_langgraph_subgraphs::parent_command_program": (
        [
            "run/1:0:subgraph_node:status",
            "run/1:0:subgraph_node:steps",
            "run/1:0:subgraph_node:tree",
        ],
        PARENT,
    ),
    "test_langgraph_subgraphs::parent_command_choice_program": (
        ["run/1:0:subgraph:status", "run/1:0:subgraph:steps", "run/1:0:subgraph:tree"],
        PARENT,
    ),
    "test_langgraph_subgraphs::parent_command_nested_program": (["run:subruns"], UNDETECTED),
    "test_langgraph_subgraphs::parent_command_async_program": (
        ["run/1:0:child:status", "run/1:0:child:steps", "run/1:0:child:tree"],
        PARENT,
    ),
    "test_langgraph_subgraphs::parent_command_at_the_top_program": (
        ["run:status", "run:steps", "run:tree"],
        PARENT,
    ),
    "test_langgraph_subgraphs::test_a_compiled_graph_added_without_a_name_is_named_as_langgraph_names_it": (  # noqa: E501
        [],
        NO_RUN,
    ),
    "test_langgraph_subgraphs::test_a_run_lists_its_subruns_with_their_parent_and_task": (
        ["0 calls recorded"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraphs::test_subruns_are_listed_in_start_order": (
        ["0 calls recorded"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraphs::test_async_runs_keep_their_subruns_too": (
        ["0 calls recorded"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraphs::test_run_files_keep_the_subruns": (
        ["0 calls recorded"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraphs::test_a_damaged_subrun_in_a_run_file_is_refused_by_name": (
        ["0 calls recorded"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraphs::test_a_resumed_subgraph_continues_at_the_node_that_asked": (
        ["0 apps with a saver"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraph_checkpoints::replay_and_fork_program": (
        ["run/3:0:sub:forks", "run/3:0:sub:tree"],
        NS_REUSE,
    ),
    "test_langgraph_subgraph_checkpoints::refusals_program": (
        ["run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_checkpoints::root_checkpointer_modes_program": (
        ["run:subruns"],
        OWN_THREAD,
    ),
    "test_langgraph_subgraph_checkpoints::test_a_subgraph_paused_in_one_process_resumes_at_its_node_in_another": (  # noqa: E501
        [],
        NO_RUN,
    ),
    "test_langgraph_subgraph_checkpoints::test_run_from_checkpointer_rebuilds_subruns_as_the_live_run_has_them": (  # noqa: E501
        ["0 apps with a saver"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraph_checkpoints::test_delete_thread_deletes_its_subgraphs_threads": (
        ["0 apps with a saver"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subrun_handed_to_the_parent_runs_as_on_langgraph_and_is_no_failure[how0]": (  # noqa: E501
        ["run/1:0:s:status", "run/1:0:s:steps", "run/1:0:s:tree"],
        PARENT,
    ),
    "test_langgraph_subgraph_edges::test_a_subrun_handed_to_the_parent_runs_as_on_langgraph_and_is_no_failure[how1]": (  # noqa: E501
        ["run/1:0:s:status", "run/1:0:s:steps", "run/1:0:s:tree"],
        PARENT,
    ),
    "test_langgraph_subgraph_edges::test_keys_the_parent_lacks_are_dropped_silently_as_on_langgraph": (  # noqa: E501
        ["run:effects"],
        DROPPED,
    ),
    "test_langgraph_subgraph_edges::test_dropped_subgraph_keys_stay_in_the_record": (
        ["0 calls recorded"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraph_edges::test_a_function_node_returning_unknown_keys_still_warns": (
        ["0 calls recorded"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type0-where0]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type0-where1]": (  # noqa: E501
        ["run:effects", "run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type0-where2]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type0-where3]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type0-where4]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type1-where0]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type1-where1]": (  # noqa: E501
        ["run:effects", "run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type1-where2]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type1-where3]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type1-where4]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type2-where0]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type2-where1]": (  # noqa: E501
        ["run:effects", "run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type2-where2]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type2-where3]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph[error_type2-where4]": (  # noqa: E501
        ["run:status", "run:steps", "run:subruns", "run:tree"],
        SAVER_RECORD,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_inherits_the_parents_recursion_limit_as_on_langgraph[limit2-how0]": (  # noqa: E501
        ["run/2:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_inherits_the_parents_recursion_limit_as_on_langgraph[limit2-how1]": (  # noqa: E501
        ["run/2:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_inherits_the_parents_recursion_limit_as_on_langgraph[limit3-how0]": (  # noqa: E501
        ["run/2:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_inherits_the_parents_recursion_limit_as_on_langgraph[limit3-how1]": (  # noqa: E501
        ["run/2:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_inherits_the_parents_recursion_limit_as_on_langgraph[limit5-how0]": (  # noqa: E501
        ["run/2:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_inherits_the_parents_recursion_limit_as_on_langgraph[limit5-how1]": (  # noqa: E501
        ["run/2:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_parallel_subruns_are_listed_in_the_same_order_every_run": (
        ["0 calls recorded"],
        NBGRAPH_ONLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit0-config4]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit1-config0]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit1-config1]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit1-config2]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit1-config4]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit2-config0]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit2-config1]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit2-config2]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_subgraph_edges::test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph[limit2-config4]": (  # noqa: E501
        ["run/1:0:s:status"],
        APPLY,
    ),
    "test_langgraph_messages::remove_an_unknown_id_is_an_error": (["run:status"], APPLY),
    "test_langgraph_messages::update_state_with_messages": (["run:effects", "run:steps"], UPDATE),
    "test_langgraph_messages::add_messages_called_directly": ([], NO_RUN),
    "test_langgraph_messages::a_value_neither_library_reads_is_an_error": (
        ["run:status", "run:steps", "run:tree"],
        APPLY,
    ),
    "test_langgraph_messages::test_the_canonical_form_keeps_id_structure": ([], NO_RUN),
    "test_langgraph_messages::test_sqlite_saver_keeps_langchain_messages_across_processes": (
        [],
        NO_RUN,
    ),
    "test_langgraph_tools::test_tools_condition[state0]": ([], NO_RUN),
    "test_langgraph_tools::test_tools_condition[state1]": ([], NO_RUN),
    "test_langgraph_tools::test_tools_condition[state2]": ([], NO_RUN),
    "test_langgraph_tools::test_tools_condition[state3]": ([], NO_RUN),
    "test_langgraph_tools::test_tools_condition[state4]": ([], NO_RUN),
    "test_langgraph_tools::test_batch_and_abatch[call0]": ([], NO_RUN),
    "test_langgraph_tools::test_batch_and_abatch[call1]": (["1 calls recorded"], PAIRING),
    "test_langgraph_tools::test_batch_and_abatch[call2]": (["1 calls recorded"], PAIRING),
    "test_langgraph_tools::test_batch_and_abatch[call3]": ([], NO_RUN),
    "test_langgraph_tools::test_batch_and_abatch[call4]": (["1 calls recorded"], PAIRING),
    "test_langgraph_tools::test_batch_and_abatch[call5]": (["1 calls recorded"], PAIRING),
    "test_langgraph_tools::test_batch_and_abatch[call6]": (
        ["run:effects", "run:final", "run:steps"],
        PAIRING,
    ),
    "test_langgraph_tools::test_batch_and_abatch[call7]": (
        ["run:effects", "run:final", "run:status", "run:steps", "run:tree"],
        PAIRING,
    ),
    "test_langgraph_tools::test_with_config_merges_under_each_call": (
        ["run:effects", "run:final", "run:steps"],
        CONFIG,
    ),
    "test_langgraph_tools::test_a_graph_in_a_chain": (["3 calls recorded"], PAIRING),
    "test_langgraph_tools::test_get_graph_and_draw_mermaid_as_langgraph[build0]": ([], NO_RUN),
    "test_langgraph_tools::test_get_graph_and_draw_mermaid_as_langgraph[build1]": ([], NO_RUN),
    "test_langgraph_tools::test_get_graph_and_draw_mermaid_as_langgraph[build2]": ([], NO_RUN),
    "test_langgraph_tools::test_get_graph_and_draw_mermaid_as_langgraph[build3]": ([], NO_RUN),
    "test_langgraph_tools::test_get_graph_and_draw_mermaid_as_langgraph[build4]": ([], NO_RUN),
    "test_langgraph_tools::test_get_graph_and_draw_mermaid_as_langgraph[build5]": ([], NO_RUN),
    "test_langgraph_tools::test_get_graph_and_draw_mermaid_as_langgraph[build6]": ([], NO_RUN),
    "test_langgraph_tools::test_get_graph_and_draw_mermaid_as_langgraph[build7]": ([], NO_RUN),
    "test_langgraph_tools::test_get_graph_marks_interrupts": ([], NO_RUN),
    "test_langgraph_tools::test_draw_mermaid_options": ([], NO_RUN),
    "test_langgraph_tools::test_draw_mermaid_png_is_drawn_offline": ([], NO_RUN),
    "test_langgraph_context::test_a_sends_path_counts_among_the_steps_sends_when_an_edge_task_runs_beside_it": (  # noqa: E501
        ["run:effects", "run:final", "run:steps"],
        SERDE,
    ),
    "test_langgraph_context::test_get_config_and_get_runtime_outside_a_run_raise": ([], NO_RUN),
    "test_langgraph_context::test_bad_context_fails_as_in_langgraph": (
        ["2 calls recorded"],
        PAIRING,
    ),
    "test_langgraph_context::test_store_api_put_get_search_delete_and_namespaces": ([], NO_RUN),
    "test_langgraph_context::test_a_graph_invoked_inside_a_node_inherits_context_store_and_configurable": (  # noqa: E501
        [
            "run/1:0:outer:effects",
            "run/1:0:outer:final",
            "run/1:0:outer:steps",
            "run:effects",
            "run:final",
            "run:steps",
        ],
        CONFIG,
    ),
    "test_langgraph_context::test_the_store_keeps_langgraphs_small_habits": ([], NO_RUN),
}
"""Every program of `MODULES` whose imported records do not all agree with nbgraph's: the
keys of `deep_view` that differ (in any of its calls and threads) and why. The rest agree."""


PROGRAMS_ALL = differential_programs()


@pytest.mark.parametrize("run", [r for _, r in PROGRAMS_ALL], ids=[i for i, _ in PROGRAMS_ALL])
def test_every_differential_program_imported_agrees_with_nbgraph(run, request):
    pytest.importorskip("langgraph")
    ident = request.node.callspec.id
    count, found = program_differences(run)
    expected, _why = NOT_AGREEING.get(ident, ([], None))
    if _why is NO_RUN:
        assert count == 0
        return
    assert count > 0
    if _why is PAIRING:  # (which calls pair depends on the threads: not judged)
        return
    assert found == expected, (ident, found)


def test_the_proofs_count():
    """The counts the README quotes: programs run, and how many agree."""
    differential = [i for i, _ in PROGRAMS_ALL if NOT_AGREEING.get(i, ([], ""))[1] is not NO_RUN]
    differential = [i for i in differential if NOT_AGREEING.get(i, ([], ""))[1] is not NBGRAPH_ONLY]
    agree = [i for i in differential if i not in NOT_AGREEING]
    assert (len(PROGRAMS_ALL), len(differential), len(agree)) == (216, 179, 123)
    reasons = [why for _, why in NOT_AGREEING.values()]
    counts = {why: reasons.count(why) for why in (APPLY, PARENT, SAVER_RECORD, PAIRING)}
    assert list(counts.values()) == [18, 6, 16, 8]
    threads = (len(SUBGRAPH_PROGRAMS), len(SUBGRAPH_HISTORY_CANNOT_TELL), len(CANNOT_IMPORT))
    assert threads == (15, 2, 1)
