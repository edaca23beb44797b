"""Streaming: live chunks a node sends while it runs (`custom`, `messages`), `tasks` events, and
subgraphs' chunks under their namespaces.
"""
