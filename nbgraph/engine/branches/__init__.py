"""Branch lineages (`compile(semantics="branches")`): each parallel branch carries its own copy of
the state, merged where branches meet.
"""
