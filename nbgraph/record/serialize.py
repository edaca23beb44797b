"""The run-file codec's old home, kept so code that imports it from here keeps working.

The codec itself is `nbgraph.record.files.serialize` (issue 27 put the record's run-file modules
in `record/files/`)."""

from nbgraph.record.files.serialize import (
    RunFileError,
    load_log,
    log_from_json,
    run_to_json,
    save_run,
)

__all__ = ["RunFileError", "load_log", "log_from_json", "run_to_json", "save_run"]
