"""Where a run file's steps are: one compact JSON line each, counted and summed in its header.

`Run.save` writes the run data's `steps` as a list with one step a line
(`[\\n   {...},\\n   {...}\\n  ]`) and, in the header, `"step_lines": {"count": N, "crc32": C}`:
how many lines and the CRC-32 of that count and of the list's bytes. `Run.load` finds that
list by its layout, sums it with the count, and if the sum agrees reads the rest of the file
alone and leaves each step's line to be read (and the lines counted) when the step is first
asked for (`lazy_steps.LazySteps`). A file that does not agree (edited, damaged, written by
an earlier nbgraph without the entry) is read whole and checked at once.
"""

from __future__ import annotations

import zlib
from typing import Any

from nbgraph.codec import nesting

__all__ = ["ENTRY", "StepLines", "find_step_lines", "parse_json", "step_lines_entry"]

ENTRY = "step_lines"
"""The header entry: `{"count": lines, "crc32": the sum}`, the sum the CRC-32 of the count
(`b"%d\\n" % count`) then of the steps list's bytes (`_sum`)."""

_KEY = b'\n  "steps": '  # (the run data's entries: one a line, two spaces in)
_OPEN = b"[\n   "
_CLOSE = b"\n  ]"
_AFTER = _CLOSE + b',\n  "semantics": '  # (always the entry after the steps)
_RUN = b'\n "run": {'  # (the document's entries: one space in)


class StepLines:
    """A file's step lines, found: the document without them (`shell`, its steps `[]`),
    and where the lines are in the file's bytes (`data[start:end]`: each step's compact
    JSON, all but the last with a comma after it, one a line, indented); `count` of them,
    once the header's entry `agrees` (the lines are counted as they are read)."""

    __slots__ = ("count", "data", "end", "listed", "shell", "start", "strict")

    def __init__(
        self, shell: bytes, data: bytes, listed: tuple[int, int], lines: tuple[int, int]
    ) -> None:
        self.shell, self.data, self.listed = shell, data, listed  # (listed: `[` to `]`)
        self.start, self.end = lines
        self.count = -1
        self.strict = True  # (UTF-8 read strictly: bytes of a file; False: a str's)

    def agrees(self, entry: Any) -> bool:
        """Whether the header's entry (`step_lines`) sums these lines with its count; if so,
        `count` is that count."""
        if not (type(entry) is dict and entry.keys() == {"count", "crc32"}):
            return False
        count, crc32 = entry["count"], entry["crc32"]
        if type(count) is not int or type(crc32) is not int or count < 0:
            return False
        if (count == 0) != (self.end == self.start):
            return False
        start, end = self.listed
        if _sum(count, memoryview(self.data)[start:end]) != crc32:
            return False
        self.count = count
        return True


def _sum(count: int, steps: Any) -> int:
    return zlib.crc32(steps, zlib.crc32(b"%d\n" % count))


def step_lines_entry(steps: bytes | bytearray) -> dict[str, int]:
    """The header entry for the steps list `steps` (its bytes, as written)."""
    count = 0 if steps == b"[]" else steps.count(b"\n") - 1
    return {"count": count, "crc32": _sum(count, steps)}


def find_step_lines(data: bytes) -> StepLines | None:
    """The step lines of a file's bytes laid out as `Run.save` writes them, or None (laid
    out otherwise: the file is read whole). Nothing is checked but the layout and the sum:
    the caller compares them with the header and checks each line when it is read."""
    if b'\n "step_lines": ' not in data[:4096]:  # (written before the graph)
        return None
    run = data.find(_RUN)
    key = data.find(_KEY, run) if run >= 0 else -1
    if key < 0:
        return None
    start = key + len(_KEY)
    if data.startswith(b"[]", start):
        end = first = close = start + 2
    elif data.startswith(_OPEN, start):
        close = data.rfind(_AFTER)  # (the entries after the steps: short, and one a line)
        if close < start:
            return None
        end, first = close + len(_CLOSE), start + len(_OPEN) - 3  # (the first line's indent)
    else:
        return None
    return StepLines(data[:start] + b"[]" + data[end:], data, (start, end), (first, close))


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19  # (19 digits in a row: maybe an int past 64 bits)


def parse_json(data: bytes, strict: bool = False) -> Any:
    """JSON `data` (UTF-8) as `nesting.loads` reads it, by `orjson.loads` where that reads the
    same data (several times faster): not for 19 digits in a row (an int past 64 bits,
    which orjson reads as a float), nor for what orjson refuses and json may read (NaN,
    1e400, a lone surrogate, deep nesting) or refuses saying why. `strict`: bytes read from a
    file, UTF-8 without lone surrogates (else: a str's, encoded with them).

    Raises:
        ValueError: not JSON (`json.JSONDecodeError`), nested too deep, or a number json
            refuses.
    """
    orjson = nesting.orjson()
    if orjson is not None and _LONG_NUMBER not in data.translate(_DIGITS):
        try:
            return orjson.loads(data)
        except ValueError:  # (orjson.JSONDecodeError): json says what it makes of it
            pass
    return nesting.loads(data.decode("utf-8", "strict" if strict else "surrogatepass"))
