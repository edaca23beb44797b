"""The engine: supersteps, task execution, write application, streaming."""
