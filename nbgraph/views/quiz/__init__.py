"""Predict, then see: the quiz over a run's merges and the reducer's fold spelled out."""
