"""Comparing two runs: step by step, node by node, value by value, message by message."""
