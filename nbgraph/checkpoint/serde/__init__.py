"""LangGraph's `langgraph.checkpoint.serde`: how savers turn values into bytes and back."""
