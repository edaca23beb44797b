"""Branch lineages as data (`compile(semantics="branches")`): a lineage's points, the rules
that merge lineages where branches meet, and their form in a checkpoint. The branch run loop
(`engine.branches`) grows them; persistence saves and restores them; the record rebuilds
them from a log.
"""
