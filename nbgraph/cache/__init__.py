"""LangGraph's `langgraph.cache`: caches of node results, given to `compile(cache=...)`."""
