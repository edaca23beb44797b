"""`nbgraph.as_langgraph`: LangGraph code run unchanged on nbgraph, as a script, a test run and
a notebook, each run recorded; and a clear refusal where the real langgraph is already loaded.

The script and the test run are subprocesses (a fresh interpreter, as a user starts them); the
notebook extension runs in a real Jupyter kernel (one for every notebook check)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
PYTEST_ENV = {**ENV, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
"""For the pytest runs: installed plugins left out (nbmake's import alone takes seconds)."""

FUNCTIONAL_PROGRAM = """
import json
import os
import sys

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.types import Command, interrupt


@task
def double(number: int) -> int:
    return 2 * number


@entrypoint(checkpointer=InMemorySaver())
def workflow(numbers: list[int]) -> dict:
    doubled = [future.result() for future in [double(n) for n in numbers]]
    verdict = interrupt({"doubled": doubled})
    return {"doubled": doubled, "verdict": verdict}


if __name__ == "__main__":
    config = {"configurable": {"thread_id": "t"}}
    paused = workflow.invoke([int(a) for a in sys.argv[1:]], config)
    done = workflow.invoke(Command(resume="fine"), config)
    print(json.dumps({
        "paused": paused["__interrupt__"][0].value,
        "done": done,
        "argv": sys.argv[1:],
        "app": type(workflow).__module__,
        "path": sys.path[0] == os.path.dirname(os.path.abspath(__file__)),
    }))
"""


def python(
    *args: str, cwd: Path, stdin: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env or ENV,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


AFTERWARDS = """
import json, sys
run = workflow.last_run
print(json.dumps({
    "same types": sys.modules["langgraph.types"] is sys.modules["nbgraph.types"],
    "same memory": sys.modules["langgraph.checkpoint.memory"]
    is sys.modules["nbgraph.checkpoint.memory"],
    "run": type(run).__module__,
    "tasks": [task.node for step in run.log.steps for task in step.tasks],
}))
"""
"""Typed at `python -i`'s prompt after the script: its names, and the run it recorded."""

RESULTS = {"paused": {"doubled": [2, 4]}, "done": {"doubled": [2, 4], "verdict": "fine"}}


def test_a_langgraph_script_runs_unchanged_on_nbgraph_and_its_run_is_recorded(tmp_path):
    (tmp_path / "program.py").write_text(FUNCTIONAL_PROGRAM)
    args = ["-i", "-m", "nbgraph.as_langgraph", "program.py", "1", "2"]
    done = python(*args, cwd=tmp_path, stdin=AFTERWARDS)
    assert done.returncode == 0, done.stderr
    printed, afterwards = (json.loads(line) for line in done.stdout.strip().splitlines())
    assert printed == {**RESULTS, "argv": ["1", "2"], "app": "nbgraph.notebook.app", "path": True}
    assert afterwards == {
        "same types": True,
        "same memory": True,
        "run": "nbgraph.notebook.run",
        "tasks": ["workflow", "double", "double"],  # the resumed run, recorded
    }


def test_the_same_script_on_the_real_langgraph_gives_the_same_results(tmp_path):
    (tmp_path / "program.py").write_text(FUNCTIONAL_PROGRAM)
    real = python("program.py", "1", "2", cwd=tmp_path)
    assert real.returncode == 0, real.stderr
    printed = json.loads(real.stdout)
    assert printed == {**RESULTS, "argv": ["1", "2"], "app": printed["app"], "path": True}
    assert printed["app"].startswith("langgraph.")


def test_dash_m_runs_a_module_as_python_dash_m_would(tmp_path):
    (tmp_path / "program.py").write_text(FUNCTIONAL_PROGRAM)
    done = python("-m", "nbgraph.as_langgraph", "-m", "program", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["done"] == {"doubled": [6], "verdict": "fine"}


def test_the_runner_says_how_to_call_it_and_refuses_a_missing_file(tmp_path):
    bare = python("-m", "nbgraph.as_langgraph", cwd=tmp_path)
    assert bare.returncode == 2 and "python -m nbgraph.as_langgraph SCRIPT.py" in bare.stderr
    missing = python("-m", "nbgraph.as_langgraph", "nowhere.py", cwd=tmp_path)
    assert missing.returncode == 2 and "can't open file" in missing.stderr


def test_the_runner_refuses_when_langgraph_was_imported_before_the_program(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text("import langgraph.types\n")
    (tmp_path / "program.py").write_text("print('ran')\n")
    done = subprocess.run(
        [sys.executable, "-m", "nbgraph.as_langgraph", "program.py"],
        cwd=tmp_path,
        env={**ENV, "PYTHONPATH": os.pathsep.join([ENV["PYTHONPATH"], str(tmp_path / "site")])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("nbgraph.as_langgraph: The real langgraph is already imported")
    assert "a sitecustomize or usercustomize module" in done.stderr


def test_a_failing_program_shows_its_own_traceback_and_exits_1_as_under_python(tmp_path):
    (tmp_path / "failing.py").write_text("def check():\n    raise ValueError('no')\n\ncheck()\n")
    ours = python("-m", "nbgraph.as_langgraph", "failing.py", cwd=tmp_path)
    plain = python("failing.py", cwd=tmp_path)
    assert (ours.returncode, ours.stderr) == (1, plain.stderr)
    assert plain.stderr.startswith("Traceback") and "line 4, in <module>" in plain.stderr


def test_langchain_stays_langchains_and_its_langgraph_imports_load_nbgraph(tmp_path):
    """A program's langchain_core is LangChain's own; `langchain.agents`, built on LangGraph's
    private modules, fails to import with an error naming the module and who imported it."""
    (tmp_path / "chat.py").write_text(
        textwrap.dedent(
            """
            import sys
            from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
            from langchain_core.messages import AIMessage
            from langgraph.prebuilt import ToolNode, create_react_agent

            model = GenericFakeChatModel(messages=iter([AIMessage("hi"), AIMessage("yes")]))
            print(model.invoke("hello").content, AIMessage.__module__, ToolNode.__module__)
            agent = create_react_agent(model, tools=[])
            answer = agent.invoke({"messages": [{"role": "user", "content": "ok?"}]})
            print(answer["messages"][-1].content, type(agent).__module__, agent.last_run.status)
            """
        )
    )
    chat = python("-m", "nbgraph.as_langgraph", "chat.py", cwd=tmp_path)
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.split() == [
        "hi",
        "langchain_core.messages.ai",
        "nbgraph.prebuilt.tool_node",
        "yes",
        "nbgraph.notebook.app",
        "done",
    ]
    (tmp_path / "agent.py").write_text("from langchain.agents import create_agent\n")
    agent = python("-m", "nbgraph.as_langgraph", "agent.py", cwd=tmp_path)
    assert agent.returncode == 1
    error = agent.stderr.strip().splitlines()[-1]
    assert error.startswith("ModuleNotFoundError: No module named 'langgraph._internal'")
    assert "private" in error and "Imported by langchain.agents." in error


def test_a_forked_child_keeps_the_switch_and_a_spawned_one_does_not(tmp_path):
    (tmp_path / "children.py").write_text(
        textwrap.dedent(
            """
            import multiprocessing


            def loaded(_):
                import langgraph.types
                return langgraph.types.__name__


            if __name__ == "__main__":
                for method in ("fork", "spawn"):
                    with multiprocessing.get_context(method).Pool(1) as pool:
                        print(method, *pool.map(loaded, [0]))
            """
        )
    )
    done = python("-m", "nbgraph.as_langgraph", "children.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["fork nbgraph.types", "spawn langgraph.types"]


def test_pytest_dash_p_runs_a_test_run_on_nbgraph_and_so_do_addopts(tmp_path):
    (tmp_path / "conftest.py").write_text(
        "from langgraph.types import Command\nLOADED_BY_CONFTEST = Command.__module__\n"
    )
    (tmp_path / "test_program.py").write_text(
        FUNCTIONAL_PROGRAM.split("if __name__")[0]
        + textwrap.dedent(
            """
            import conftest


            def test_the_workflow_pauses_and_resumes_on_nbgraph():
                config = {"configurable": {"thread_id": "t"}}
                assert workflow.invoke([5], config)["__interrupt__"][0].value == {"doubled": [10]}
                assert workflow.invoke(Command(resume="ok"), config)["verdict"] == "ok"
                assert conftest.LOADED_BY_CONFTEST.startswith("nbgraph.")
                assert workflow.last_run.log.steps
            """
        )
    )
    pytest_ = ["-m", "pytest", "-p", "no:cacheprovider", "-q"]
    done = python(
        *pytest_, "-p", "nbgraph.as_langgraph", "test_program.py", cwd=tmp_path, env=PYTEST_ENV
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    # the project's own default, as docs/as-langgraph.md shows it
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = "-p nbgraph.as_langgraph"\n'
    )
    by_default = python(*pytest_[:-1], "test_program.py", cwd=tmp_path, env=PYTEST_ENV)
    assert by_default.returncode == 0, by_default.stdout + by_default.stderr
    assert "1 passed" in by_default.stdout
    assert "nbgraph.as_langgraph: import langgraph loads nbgraph" in by_default.stdout  # header


def test_pytest_refuses_to_switch_after_a_plugin_loaded_the_real_langgraph(tmp_path):
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    args = ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "langgraph.types"]
    done = python(
        *args, "-p", "nbgraph.as_langgraph", "test_nothing.py", cwd=tmp_path, env=PYTEST_ENV
    )
    assert done.returncode != 0
    assert "LangGraphAlreadyImportedError: The real langgraph is already imported" in done.stderr
    assert "Give `-p nbgraph.as_langgraph` before any other `-p` option" in done.stderr


NOWHERE = "No module named 'langgraph.nowhere'"
NO_NAME = "cannot import name 'NoSuchName' from 'nbgraph.types'"


def test_install_uninstall_and_the_context_manager_switch_cleanly():
    code = textwrap.dedent(
        """
        import json, sys
        import nbgraph.types
        from nbgraph.as_langgraph import as_langgraph, install, installed, uninstall

        with as_langgraph():
            import langgraph.errors
            from langgraph.types import Command
            inside = [installed(), Command is nbgraph.types.Command,
                      nbgraph.types.__spec__.name, langgraph.errors.__name__]
            try:
                raise nbgraph.errors.GraphRecursionError("deep")
            except langgraph.errors.GraphRecursionError:
                inside.append("caught")
            import importlib.metadata
            inside.append(importlib.metadata.version("langgraph").split(".")[0])
            try:
                import langgraph.nowhere
            except ImportError as error:
                inside.append(str(error).split(":")[0])
                inside.append("Imported by __main__." in str(error))
                inside.append("the installed LangGraph has no such module either" in str(error))
            try:
                import langgraph.pregel  # LangGraph's, which nbgraph does not mirror
            except ImportError as error:
                inside.append("nbgraph does not mirror this module" in str(error))
            try:
                from langgraph.types import NoSuchName
            except ImportError as error:
                inside.append(str(error).split(" (")[0])
        after = [installed(), "langgraph.types" in sys.modules]
        install(); install()  # twice: one finder
        twice = sum(type(f).__name__ == "LangGraphFinder" for f in sys.meta_path)
        uninstall()
        import langgraph.types  # the real one, now that nothing is switched on
        print(json.dumps([inside, after, twice, langgraph.types.__name__]))
        """
    )
    done = python("-c", code, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        [
            True,
            True,
            "nbgraph.types",
            "nbgraph.errors",
            "caught",
            "1",
            NOWHERE,
            True,
            True,
            True,
            NO_NAME,
        ],
        [False, False],
        1,
        "langgraph.types",
    ]


def test_it_refuses_when_the_real_langgraph_is_already_imported():
    import langgraph.types

    from nbgraph.as_langgraph import (
        LangGraphAlreadyImportedError,
        install,
        installed,
        load_ipython_extension,
        real_langgraph_modules,
    )

    assert "langgraph.types" in real_langgraph_modules()
    finders = list(sys.meta_path)
    with pytest.raises(LangGraphAlreadyImportedError) as raised:
        install()
    assert isinstance(raised.value, RuntimeError)
    assert "langgraph.types" in raised.value.modules
    assert "The real langgraph is already imported in this process (langgraph" in str(raised.value)
    assert "before the first `import langgraph`" in str(raised.value)
    with pytest.raises(LangGraphAlreadyImportedError, match="Restart the kernel"):
        load_ipython_extension(None)
    assert sys.meta_path == finders and not installed()
    assert langgraph.types.__name__ == "langgraph.types"


# --- the notebook extension, in a real kernel ---------------------------------------------


@pytest.fixture(scope="module")
def kernel():
    manager = pytest.importorskip("jupyter_client.manager")
    km, kc = manager.start_new_kernel(kernel_name="python3", env=ENV, cwd=str(ROOT))
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run_cell(kc, code: str) -> tuple[str, str]:
    """(what the cell printed, the error it raised as 'Name: message', or '')."""
    printed, error = [], []

    def hook(message):
        content = message["content"]
        if message["msg_type"] == "stream":
            printed.append(content["text"])
        elif message["msg_type"] == "error":
            error.append(f"{content['ename']}: {content['evalue']}")

    kc.execute_interactive(code, output_hook=hook, timeout=120)
    return "".join(printed), "".join(error)


@pytest.mark.slow
def test_load_ext_in_a_kernel_runs_a_langgraph_program_unchanged_then_refuses_a_mix(kernel):
    loaded, error = run_cell(kernel, "%load_ext nbgraph.as_langgraph")
    assert error == "" and "`import langgraph` now loads nbgraph" in loaded
    program = FUNCTIONAL_PROGRAM.split("if __name__")[0]
    assert run_cell(kernel, program) == ("", "")
    printed, error = run_cell(
        kernel,
        "import sys\n"
        "config = {'configurable': {'thread_id': 'nb'}}\n"
        "workflow.invoke([4], config)\n"
        "print(workflow.invoke(Command(resume='yes'), config))\n"
        "run = workflow.last_run\n"
        "print(type(run).__module__, len(run.effects) > 0)\n"
        "print(sys.modules['langgraph.func'] is sys.modules['nbgraph.func'])",
    )
    assert error == ""
    assert printed.splitlines() == [
        "{'doubled': [8], 'verdict': 'yes'}",
        "nbgraph.notebook.run True",
        "True",
    ]
    # switched off, the real langgraph loads; switching on again is refused, with what to do
    assert run_cell(kernel, "%unload_ext nbgraph.as_langgraph\nimport langgraph.types") == (
        "",
        "",
    )
    _, error = run_cell(kernel, "%load_ext nbgraph.as_langgraph")
    assert error.startswith("LangGraphAlreadyImportedError: The real langgraph is already")
    assert "Restart the kernel" in error


# --- the page's example, as the page says it runs ------------------------------------------


def test_the_pages_script_prints_the_same_on_langgraph_and_on_nbgraph_and_is_recorded(tmp_path):
    page = (ROOT / "docs" / "as-langgraph.md").read_text(encoding="utf-8")
    script = re.search(r"```python\n(.*?)```", page, flags=re.S).group(1)
    printed = re.search(r"Both print the same two lines:\n\n```text\n(.*?)```", page, re.S)
    session = re.search(r"```text\n\$ python -i -m nbgraph.as_langgraph (.*?)```", page, re.S)
    (tmp_path / "post.py").write_text(script)
    real = python("post.py", "otters", cwd=tmp_path)
    assert real.returncode == 0, real.stderr
    assert real.stdout == printed.group(1)
    typed = "".join(line[4:] + "\n" for line in session.group(1).splitlines() if line[:4] == ">>> ")
    assert "graph.last_run" in typed
    args = ["-i", "-m", "nbgraph.as_langgraph", "post.py", "otters"]
    ours = python(*args, cwd=tmp_path, stdin=typed)
    assert ours.returncode == 0 and "Traceback" not in ours.stderr, ours.stderr
    assert ours.stdout.startswith(printed.group(1))
    steps, effects = ours.stdout[len(printed.group(1)) :].split("   step")[1:]
    assert "review" in steps and "[review]" in effects  # the resumed run, recorded


def test_only_langgraph_and_its_submodules_are_answered():
    from nbgraph.as_langgraph import LangGraphFinder

    finder = LangGraphFinder()
    for other in ("langgraph_sdk", "langgraphx", "langchain", "langchain_core.messages"):
        assert finder.find_spec(other) is None, other
    spec = finder.find_spec("langgraph.graph.message")
    assert (spec.name, spec.loader_state["home"]) == (
        "langgraph.graph.message",
        "nbgraph.graph.message",
    )
