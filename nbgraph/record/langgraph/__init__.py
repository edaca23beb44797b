"""LangGraph runs read into the record: a compiled LangGraph graph into a `GraphSpec`, a thread's
history into a `RunLog` (`Run.from_langgraph`).
"""
