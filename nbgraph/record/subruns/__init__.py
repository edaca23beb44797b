"""Subruns in the record: the runs started inside a run's tasks, from the log, a saver or a run
file, and their state trees.
"""
