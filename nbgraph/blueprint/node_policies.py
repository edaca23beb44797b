"""A node's retry and cache policies as the builder takes them: `add_node`'s
`retry_policy=` / `cache_policy=`, and `set_node_defaults` for every node that gives none.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Self

from nbgraph.blueprint.spec import NodeSpec
from nbgraph.policies import policy_problems, retry_policies

__all__ = ["NodePolicies"]


class NodePolicies:
    """The policy half of `GraphBuilder`: checks policies as they are given, and applies
    the defaults at `compile()`."""

    _problems: list[str]
    _defaults: dict[str, Any]

    def _policies(self, name: str, options: dict[str, Any]) -> dict[str, Any]:
        """`retry_policy=` (or LangGraph's older `retry=`) and `cache_policy=`, checked."""
        retry, old_name = options.pop("retry_policy", None), options.pop("retry", None)
        cache = options.pop("cache_policy", None)
        option = "retry_policy" if retry is not None or old_name is None else "retry"
        retry = retry if retry is not None else old_name
        problems = policy_problems(f"Node {name!r}", retry, cache, option)
        self._problems.extend(problems)
        if problems:
            return {}
        return {"retry": retry_policies(retry), "cache": cache}

    def set_node_defaults(
        self,
        *,
        retry_policy: Any = None,
        cache_policy: Any = None,
        error_handler: Any = None,
        timeout: Any = None,
    ) -> Self:
        """Policies for every node that gives none of its own, applied at `compile()`
        (LangGraph's `set_node_defaults`). `error_handler=` and `timeout=` are refused: nbgraph
        does not support them yet.

        Args:
            retry_policy: a `RetryPolicy` or a list of them.
            cache_policy: a `CachePolicy` (used when compiled with `cache=`).
        """
        where = "set_node_defaults()"
        for key, value in (("error_handler", error_handler), ("timeout", timeout)):
            if value is not None:
                self._problems.append(
                    f"{where}: {key}= is not supported yet; remove it, or run this graph on "
                    "LangGraph."
                )
        problems = policy_problems(where, retry_policy, cache_policy)
        self._problems.extend(problems)
        if not problems:
            retry = retry_policies(retry_policy) or self._defaults.get("retry", ())
            self._defaults = {"retry": retry, "cache": cache_policy or self._defaults.get("cache")}
        return self

    def _with_defaults(self, node: NodeSpec) -> NodeSpec:
        if not self._defaults or (node.retry and node.cache is not None):
            return node
        retry, cache = self._defaults["retry"], self._defaults["cache"]
        return replace(node, retry=node.retry or retry, cache=node.cache or cache)
