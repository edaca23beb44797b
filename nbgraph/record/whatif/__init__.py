"""What-if questions on a recorded run: who writes each field, whether the order of writes matters,
the run re-merged through other reducers.
"""
