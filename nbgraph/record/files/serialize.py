"""A run as a versioned JSON document and back: `Run.to_json`, `from_json`, `save`, `load`.

The document is `{"format": "nbgraph.run", "version": 1, "step_lines": {...}, "graph": {...},
"run": {...}}`, its values encoded by `nbgraph.codec.values`; never pickle. The graph is
described by `nbgraph.blueprint.description`, the steps by `nbgraph.record.files.step_encoding`
and `nbgraph.record.files.step_decoding`; a file whose step lines agree with `step_lines` is
read step by step (`nbgraph.record.files.step_lines`, `lazy_steps`; docs/record.md).

A loaded run reads like the original (effects, states, tree, tables), but its functions are
gone unless the caller passes the graph (`graph=app`): nodes, routers, merges and filters are
stand-ins that say so when called. Reducers any process has (nbgraph's own by name, the
`operator` module's by `"function"`) are found again.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import json
import math
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from nbgraph.blueprint import GraphSpec
from nbgraph.blueprint.description import check_graph, describe_graph, graph_from_description
from nbgraph.codec import nesting
from nbgraph.codec.classes import check_models, named_classes
from nbgraph.codec.nesting import ValueTooDeepError
from nbgraph.codec.values import (
    UnknownTagError,
    ValueEncoder,
    decode_error,
    decode_value,
    encode_error,
    encode_value,
)
from nbgraph.engine.facts import RunLog, StepLog, join_data
from nbgraph.errors import GraphMismatchError, NbgraphError
from nbgraph.primitives import MISSING
from nbgraph.record.files.lazy_steps import LazySteps, StepLineError
from nbgraph.record.files.log_shape import (
    LogShapeError,
    check_document,
    check_step_names,
    known_nodes,
)
from nbgraph.record.files.step_decoding import (
    BrokenDocument,
    checked_steps,
    decode_join,
    decode_step,
    mapping,
)
from nbgraph.record.files.step_encoding import encode_steps, needs_afters, step_data
from nbgraph.record.files.step_lines import (
    ENTRY,
    StepLines,
    find_step_lines,
    parse_json,
    step_lines_entry,
)
from nbgraph.record.run_context import decode_store_ops, encode_store_ops
from nbgraph.record.subruns.files import attach_subruns, encode_subruns
from nbgraph.record.subruns.runs import subrun_logs
from nbgraph.reducers import replay_budget

if TYPE_CHECKING:
    from pathlib import Path

    from nbgraph.record.run import RunRecord

__all__ = [
    "RunFileError",
    "checked_run",
    "file_label",
    "load_log",
    "log_from_json",
    "replay",
    "run_document",
    "run_to_json",
    "save_run",
]

_FORMAT = "nbgraph.run"
_FORMAT_VERSION = 1


class RunFileError(NbgraphError, ValueError):
    """A file (or text) is not a run this nbgraph can read; the message says which and why."""


def _plain_json(value: Any) -> Any:
    """`value` with what is not plain JSON left out (dict entries dropped), or MISSING."""
    kind = type(value)
    if value is None or kind in (str, int, bool) or (kind is float and math.isfinite(value)):
        return value
    if kind in (list, tuple):
        items = [_plain_json(item) for item in value]
        return MISSING if any(item is MISSING for item in items) else items
    if kind is dict:
        kept = {k: _plain_json(v) for k, v in value.items() if type(k) is str}
        return {k: v for k, v in kept.items() if v is not MISSING}
    return MISSING


def run_document(run: RunRecord, steps: Any = None) -> dict[str, Any]:
    """The JSON document of a run (what `Run.to_json` writes); `steps` in place of its
    steps' data, if given."""
    log = run.log
    config = _plain_json(log.config)
    if steps is None:  # first: a value too deep is named by its field and step
        steps = encode_steps(run)
    document: dict[str, Any] = {
        "format": _FORMAT,
        "version": _FORMAT_VERSION,
        "graph": describe_graph(log.graph),
        "run": {
            "status": log.status,
            "error": encode_error(log.error),
            "input": encode_value(log.input),
            "config": config if config is not MISSING else {},
            "warnings": list(log.warnings),
            "final": encode_value(log.final),
            "steps": steps,
            "semantics": log.semantics,
            "end": None if log.end is None else join_data(log.end, encode_value, encode_value),
            "context": encode_value(log.context),
            "store_ops": encode_store_ops(log.store_ops),
        },
    }
    subruns = encode_subruns(log, lambda sub: run_document(type(run)(sub)))
    if subruns:  # (graphs run inside its tasks: each its own document)
        document["run"]["subruns"] = subruns
    return document


def run_to_json(run: RunRecord) -> str:
    """The run as JSON text: its graph indented, each entry of its run data one compact line
    (each step, each subrun: one line)."""
    return b"".join(_document_parts(run)).decode("utf-8")


def _document_parts(run: RunRecord) -> list[bytes | bytearray]:
    """The run's document as UTF-8 JSON, in parts (a long run's steps are megabytes: not
    copied into one): the header and graph indented, then each entry of the run data on a
    line of its own, compact (`steps` and `subruns`: an item a line), written by a C encoder
    (indenting is pure Python).

    The steps' lines are written as each step's data is made (kept, the data of 10,000
    steps costs more to make than to write), unless the run needs `afters`, known once
    every step is encoded. Each part is UTF-8 text, or ASCII with escapes if it holds a
    str UTF-8 cannot (a lone surrogate): JSON reads the same values back from either.
    """
    compact, steps = _compact(), None
    if not needs_afters(run):
        watch = ValueEncoder()
        steps = _lines(step_data(run, watch), compact)
        if watch.opaque:  # (a value kept as its repr: some step needs its afters)
            steps = None
    if steps is None:
        steps = _lines(encode_steps(run), compact)
    document = run_document(run, steps=())
    data = document.pop("run")
    document = {  # (the step lines' count and sum, before the graph: `step_lines`)
        "format": document["format"],
        "version": document["version"],
        ENTRY: step_lines_entry(steps),
        "graph": document["graph"],
    }
    head = _utf8(nesting.dumps, document, indent=1)  # ('{\n "format": ...\n}')
    parts: list[bytes | bytearray] = [head[:-2], b',\n "run": {']
    for key, value in data.items():
        parts.append(b"\n  " + json.dumps(key).encode() + b": ")
        if key == "steps":
            parts.append(steps)
        else:
            parts.append(_lines(value, compact) if key == "subruns" else compact(value))
        parts.append(b",")
    parts[-1] = b"\n }\n}"
    return parts


def _lines(items: Iterable[Any], compact: Callable[[Any], bytes]) -> bytes | bytearray:
    """The JSON list of `items` (each made when needed, written, and let go), one a line."""
    buffer = bytearray(b"[\n   ")
    for item in items:  # (a bytearray: keeping 10,000 lines to join them costs 3x more)
        buffer += compact(item)
        buffer += b",\n   "
    if len(buffer) == 5:
        return b"[]"
    del buffer[-5:]
    buffer += b"\n  ]"
    return buffer


def _utf8(dumps: Callable[..., str], data: Any, **options: Any) -> bytes:
    """`dumps(data)` as UTF-8 bytes, or ASCII with escapes if it holds a lone surrogate."""
    try:
        return dumps(data, ensure_ascii=False, allow_nan=False, **options).encode("utf-8")
    except UnicodeEncodeError:
        return dumps(data, ensure_ascii=True, allow_nan=False, **options).encode("ascii")


def _compact() -> Callable[[Any], bytes]:
    """How a value (a step, say) becomes compact UTF-8 JSON: by `orjson.dumps` (faster than
    json's C encoder), or by json's encoder, compact too, without orjson or for
    what orjson leaves (an int over 64 bits, a lone surrogate, nesting past 255 levels)."""
    encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)

    def slow(value: Any) -> bytes:
        try:
            text = encoder.encode(value)
        except RecursionError:  # nested deeper than the stack: as `nesting.dumps` does
            return _utf8(nesting.dumps, value, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: escaped
            return _utf8(nesting.dumps, value, separators=(",", ":"))

    fast = _orjson_dumps()
    if fast is None:
        return slow

    def compact(value: Any) -> bytes:
        try:
            return fast(value)
        except TypeError:
            return slow(value)

    return compact


@functools.cache
def _orjson_dumps() -> Callable[[Any], bytes] | None:
    """`orjson.dumps` writing exactly what json would (anything json cannot write, such as a
    dataclass or a str subclass, is left to json), or None without orjson."""
    orjson = nesting.orjson()
    if orjson is None:
        return None
    options = (
        orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
        | orjson.OPT_PASSTHROUGH_SUBCLASS
    )
    return functools.partial(orjson.dumps, option=options)


def log_from_json(
    text: str,
    *,
    where: str = "The text",
    models: Iterable[type] | None = None,
    graph: GraphSpec | None = None,
) -> RunLog:
    """Read a run log from JSON text written by `run_to_json`.

    Reading never imports a module: a value saved as a pydantic model, dataclass or Enum
    member comes back as its class if `models` names it or its module is imported already,
    else as a placeholder showing its data (see `nbgraph.codec.classes`).

    Args:
        text: the JSON text.
        where: how error messages name the text's source (a file, say).
        models: classes (pydantic models, dataclasses, Enums) values may come back as.
        graph: the compiled graph's spec, if at hand: its functions replace the stand-ins.

    Raises:
        RunFileError: the text is not JSON, not an nbgraph run, from a newer format
            version, or incomplete (naming `where` and what was expected).
        ModelsArgumentError: `models` holds something else than such classes.
        GraphMismatchError: `graph` is not the graph the run recorded.
    """
    check_models(models)
    lazy = _lazy_log(text, where, models, graph)
    return lazy if lazy is not None else _whole_log(text, where, models, graph)


def _whole_log(
    text: str, where: str, models: Iterable[type] | None, graph: GraphSpec | None
) -> RunLog:
    """`log_from_json`, reading the whole text and checking every step at once."""
    try:
        document = _parse(text)
    except ValueTooDeepError as error:
        raise RunFileError(f"{where} is not an nbgraph run: {error}") from None
    except json.JSONDecodeError as error:
        ends = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated")
        why = "it is empty" if not text.strip() else "it ends early: truncated?" if ends else ""
        raise RunFileError(
            f"{where} is not valid JSON ({error.msg} at line {error.lineno}, column "
            f"{error.colno}{'; ' + why if why else ''}); expected an nbgraph run saved by "
            "Run.save()."
        ) from None
    except ValueError as error:  # e.g. a number with more digits than int() takes
        raise RunFileError(
            f"{where} is not an nbgraph run: {error}; expected JSON saved by Run.save()."
        ) from None
    _check_header(document, where)
    try:
        check_document(document, steps=False)  # (each step: as it is decoded)
        with named_classes(models):
            return _decode_log(document, graph, where, _untagged(text), checked=False)
    except Exception as error:
        refused = _refusal(error, where)
        if refused is error:
            raise
        raise refused from (None if isinstance(error, _SHAPE_ERRORS) else error)


_SHAPE_ERRORS = (LogShapeError, BrokenDocument, UnknownTagError)


def _refusal(error: BaseException, where: str) -> BaseException:
    """The `RunFileError` a document whose decoding raised `error` is refused with (or
    `error` itself, if it is not the document's fault)."""
    if isinstance(error, GraphMismatchError):
        return error
    if isinstance(error, LogShapeError):
        return RunFileError(f"{where} is not a complete nbgraph run: {error}")
    if isinstance(error, BrokenDocument):
        return RunFileError(f"{where} is not a complete nbgraph run: {error}.")
    if isinstance(error, UnknownTagError):
        return RunFileError(
            f"{where} is not a complete nbgraph run: a value is tagged {error.tag!r}, which "
            f"format version {_FORMAT_VERSION} lacks."
        )
    if isinstance(error, KeyError):
        return RunFileError(
            f"{where} is not a complete nbgraph run: the entry {error.args[0]!r} is missing."
        )
    if isinstance(error, (TypeError, ValueError, AttributeError, IndexError, OverflowError)):
        return RunFileError(
            f"{where} is not a complete nbgraph run: {type(error).__name__}: {error}."
        )
    return error


def _parse(text: str) -> Any:
    """`nesting.loads(text)`, by `orjson.loads` where that reads the same data (it reads
    10,000 steps in two thirds of json's time: `step_lines.parse_json`)."""
    if type(text) is str:
        return parse_json(text.encode("utf-8", "surrogatepass"))
    return nesting.loads(text)


def _lazy_log(
    text: str | bytes, where: str, models: Iterable[type] | None, graph: GraphSpec | None
) -> RunLog | None:
    """The log of a file whose step lines agree with its header (`step_lines`), its steps
    left to be read when first asked for (`LazySteps`); None for any other file, or one
    whose other entries are not all right (read whole, it is refused by name).

    A branch-lineage run, and one with subruns (which sit on its tasks), are read whole.
    """
    strict = type(text) is not str  # (a file's bytes: UTF-8 read strictly, as a whole load)
    if not strict:
        if '\n "step_lines": ' not in text[:4096]:
            return None
        text = text.encode("utf-8", "surrogatepass")
    found = find_step_lines(text)  # type: ignore[arg-type]
    if found is None:
        return None
    found.strict = strict
    try:
        document = parse_json(found.shell)
        if type(document) is not dict or not found.agrees(document.get(ENTRY)):
            return None
        _check_header(document, where)
        check_document(document, steps=False)
        data = document["run"]
        if data.get("semantics") == "branches" or "subruns" in data:
            return None
        with named_classes(models):
            return _decode_log(document, graph, where, lazy=(found, models))
    except Exception:  # (read whole: it is refused, by name)
        return None


def _untagged(text: str) -> bool:
    """Whether JSON text holds no tagged value: no `"$type"`, nor any escape that could spell
    one (its values are then their own JSON data: no decoding walk)."""
    return isinstance(text, str) and "$type" not in text and "\\u" not in text


def _step_refusal(where: str, error: BaseException, entry: int, replaying: bool) -> BaseException:
    """The `RunFileError` step entry `entry` of a file read step by step (`LazySteps`) is
    refused with when reading it (or, `replaying`, replaying it) raised `error`: the
    message a whole load gives, naming the step's entry."""
    at = f"entry {entry} of its steps, checked when first read"
    if replaying:
        if isinstance(error, (RecursionError, MemoryError)):
            return RunFileError(f"{where} holds a run too large to read ({error}; {at}).")
        return RunFileError(
            f"{where} is not a consistent nbgraph run: its steps cannot be replayed "
            f"({type(error).__name__}: {str(error).rstrip('.')}; {at})."
        )
    if isinstance(error, StepLineError) and error.json:
        return RunFileError(
            f"{where} is not valid JSON in {at} ({error}); expected a step saved by Run.save()."
        )
    if isinstance(error, StepLineError):  # (a line's frame, or the lines' count)
        return RunFileError(f"{where} is not a complete nbgraph run: {error} ({at}).")
    refused = _refusal(error, where)
    if refused is error:
        return error
    return RunFileError(f"{str(refused).rstrip('.')} ({at}).")


def _check_header(document: Any, where: str) -> None:
    if type(document) is not dict or document.get("format") != _FORMAT:
        if type(document) is not dict:
            found = f"a JSON {type(document).__name__}"
        elif "format" in document:
            found = f'"format": {json.dumps(document["format"])}'
        else:
            found = 'no "format" entry'
        raise RunFileError(
            f'{where} is not an nbgraph run: expected a JSON object with "format": "{_FORMAT}", '
            f"found {found}."
        )
    version = document.get("version")
    if type(version) is not int or version < 1:
        raise RunFileError(
            f"{where} has no valid format version (found {json.dumps(version)}); expected an "
            f"integer from 1 to {_FORMAT_VERSION}."
        )
    if version > _FORMAT_VERSION:
        raise RunFileError(
            f"{where} holds a run in format version {version}, from a newer nbgraph; this "
            f"nbgraph reads versions up to {_FORMAT_VERSION}. Upgrade nbgraph to load it."
        )


def _decode_log(
    document: dict[str, Any],
    given: GraphSpec | None,
    where: str,
    plain: bool = False,
    checked: bool = True,
    lazy: tuple[StepLines, Iterable[type] | None] | None = None,
) -> RunLog:
    """The log of a document `check_document` checked (without its steps: `checked`
    False, and each step is checked as it is decoded; or `lazy`, the step lines and the
    `models`: each checked when first read, `LazySteps`)."""
    graph = graph_from_description(document["graph"])
    if given is not None:
        check_graph(document["graph"], given, where[:1].lower() + where[1:])
        graph = given
    data = document["run"]
    config = data["config"]
    functions = given is not None
    steps: Sequence[StepLog]
    if lazy is not None:
        refuse = functools.partial(_step_refusal, where)
        nodes = known_nodes(document["graph"])
        steps = LazySteps(lazy[0], graph, functions, nodes, lazy[1], refuse)
    elif checked:
        steps = [decode_step(step, graph, functions, plain) for step in data["steps"]]
    else:
        steps = checked_steps(data["steps"], graph, functions, plain)
        check_step_names(document)
    log = RunLog(
        graph,
        decode_value(data["input"]),
        mapping(config, "the config"),
        steps=steps,
        status=data["status"],
        error=decode_error(data["error"]),
        warnings=[str(message) for message in data["warnings"]],
        final=mapping(decode_value(data["final"]), "the final values"),
        semantics=str(data.get("semantics", "supersteps")),
        end=None if data.get("end") is None else decode_join(data["end"]),
        context=decode_value(data.get("context")),
        store_ops=decode_store_ops(data.get("store_ops", [])),
    )
    if "subruns" in data:
        attach_subruns(log, data["subruns"], lambda sub: _decode_log(sub, None, where))
    return log


# --- files ----------------------------------------------------------------------------------


def save_run(run: RunRecord, path: str | os.PathLike[str]) -> Path:
    """Write the run to `path` as UTF-8 JSON, atomically: a reader sees the old file or the new.

    The text goes to a temporary file in the same folder, which then replaces `path`.
    """
    import secrets  # here, with pathlib: `import nbgraph` needs neither
    from pathlib import Path

    target = Path(path)
    parts = _document_parts(run)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.writelines(parts)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


def load_log(
    path: str | os.PathLike[str],
    models: Iterable[type] | None = None,
    graph: GraphSpec | None = None,
) -> RunLog:
    """Read a run log from a file `save_run` wrote; the file is only read, and no module is
    imported because it names one (`models`, `graph`: as for `log_from_json`).

    Raises:
        FileNotFoundError: there is no such file.
        RunFileError: the file is not UTF-8 JSON, not an nbgraph run, from a newer format
            version, or incomplete (the message names the file).
    """
    from pathlib import Path

    source = Path(path)
    raw = source.read_bytes()
    where = file_label(source)
    check_models(models)
    lazy = _lazy_log(raw.removeprefix(codecs.BOM_UTF8), where, models, graph)
    if lazy is not None:  # (its step lines: UTF-8 checked as each is read)
        return lazy
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RunFileError(
            f"{where} is not an nbgraph run: it is not UTF-8 text ({error.reason} at byte "
            f"{error.start}); expected JSON saved by Run.save()."
        ) from None
    return _whole_log(text, where, models, graph)


def file_label(path: str | os.PathLike[str]) -> str:
    """How error messages name a run file."""
    from pathlib import Path

    return f"File {str(Path(path))!r}"


def checked_run(cls: type[RunRecord], log: RunLog, where: str = "The text") -> RunRecord:
    """`cls(log)` once its record is known to replay: every step's effects and the output
    are worked out now (the tables and views reuse them), and a branch-lineage run's state
    tree, so a file whose parts disagree is refused at load time rather than failing later
    in a view. (A superstep run's tree only files the decoded tasks and merges, nothing a
    file can make disagree: it is built when first asked for.) A log whose steps are read
    step by step (`LazySteps`) replays each step when it is first read instead: `cls(log)`.

    Raises:
        RunFileError: replaying the record fails, naming `where` and why.
    """
    if isinstance(log.steps, LazySteps):  # (each step: when first read)
        return cls(log)
    try:
        run = cls(log)
        with replay_budget():  # (one for the whole load: linear in the file)
            replay(run, tree=False)
    except (RecursionError, MemoryError) as error:
        raise RunFileError(f"{where} holds a run too large to read ({error}).") from None
    except Exception as error:
        raise RunFileError(
            f"{where} is not a consistent nbgraph run: its steps cannot be replayed "
            f"({type(error).__name__}: {str(error).rstrip('.')})."
        ) from error
    return run


def replay(run: RunRecord, heads: bool = True, tree: bool = True) -> None:
    """Work out `run`'s effects, state tree, output and (with `heads`) each step's lineage
    heads now, and those of its subruns (each a record of `run`'s class), so a record read
    from a file or a saver whose parts disagree fails here, whatever error that raises,
    rather than in a view. Without `tree`, a superstep run's tree is left for later (it
    reads a saver's other branches, for a record rebuilt from one: keep `tree` there)."""
    run.effect_list  # noqa: B018 - replays every step through the reducers
    if tree or run.log.semantics == "branches":
        run.tree  # noqa: B018
    run.output  # noqa: B018
    if heads and run.log.semantics == "branches":  # each step's heads: points of the run
        for step in run.log.steps:
            for head in step.heads:
                run.timeline.lineages.point(head)  # type: ignore[attr-defined]
    for _, sub in subrun_logs(run.log):
        replay(type(run)(sub), heads, tree)
