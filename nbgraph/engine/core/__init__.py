"""The core: one run of a graph, a superstep at a time — its tasks run, their writes applied
through reducers, its facts kept in a `RunLog`. It imports none of the features built on it
(persistence, streaming, nested runs, branches).
"""
