"""LangGraph's `langgraph.managed`: the state fields the engine fills, not the nodes.

`remaining_steps: RemainingSteps` holds how many supersteps the run may still take;
`is_last_step: IsLastStep` is True on the last one.
"""

from nbgraph.primitives import IsLastStep, RemainingSteps

__all__ = ["IsLastStep", "RemainingSteps"]
