"""LangGraph's `langgraph.constants`: `START`, `END` and the config keys and tags programs name.

`TAG_NOSTREAM` on a chat model (`model.with_config(tags=["nostream"])`) keeps its tokens out
of `stream_mode="messages"`; `TAG_HIDDEN` is LangSmith's tag for hidden runs; `CONF` is the
`"configurable"` key of a config; `TASKS` the channel name of `Send` packets;
`CONFIG_KEY_CHECKPOINTER` the configurable key under which a checkpointer is handed to a run.
"""

import sys

from nbgraph.primitives import END, START

__all__ = ["CONF", "CONFIG_KEY_CHECKPOINTER", "END", "START", "TAG_HIDDEN", "TAG_NOSTREAM", "TASKS"]

TAG_NOSTREAM = sys.intern("nostream")
TAG_HIDDEN = sys.intern("langsmith:hidden")
CONF = sys.intern("configurable")
TASKS = sys.intern("__pregel_tasks")
CONFIG_KEY_CHECKPOINTER = sys.intern("__pregel_checkpointer")
