"""LangGraph's `langgraph.managed.is_last_step`, where some of its docs import the managed
fields from: `RemainingSteps`, `IsLastStep`."""

from nbgraph.primitives import IsLastStep, RemainingSteps

__all__ = ["IsLastStep", "RemainingSteps"]
