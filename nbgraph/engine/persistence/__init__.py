"""Persistence: a run's steps saved to a saver as checkpoints, a thread restored from them, its
history and snapshots read back.
"""
