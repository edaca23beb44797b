"""A store's semantic index: `InMemoryStore(index={"embed": ..., "dims": ..., "fields": ...})`.

An item's texts (the parts of its value its fields name, `store.paths`) are embedded when it
is put, and kept as one vector per text; `search(query=...)` embeds the query and ranks the
items by the cosine similarity of their best vector, as LangGraph's `InMemoryStore` does.
`embed` is a function from a list of texts to their vectors (sync or `async def`), or a
langchain `Embeddings` object; a `"provider:model"` string is made into one by
`langchain.embeddings.init_embeddings` when langchain is installed.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from nbgraph.errors import InvalidArgumentError
from nbgraph.store.paths import WHOLE, path_tokens, texts_at

__all__ = ["Embedder", "VectorIndex", "cosine_scores"]

_INDEX_KEYS = ("embed", "dims", "fields", "distance_type", "ann_index_config")


class Embedder:
    """What `index["embed"]` is made into: `embed_documents`/`embed_query` and their
    awaitable forms, whichever way the user gave it.

    Args:
        embed: a function `texts -> vectors` (an `async def` one serves only the awaitable
            methods), an object with `embed_documents` and `embed_query` (a langchain
            `Embeddings`), or a `"provider:model"` string.

    >>> Embedder(lambda texts: [[len(t), 1.0] for t in texts]).embed_query("abc")
    [3, 1.0]
    """

    def __init__(self, embed: Any) -> None:
        if isinstance(embed, str):
            embed = _from_provider(embed)
        self.model = embed if _is_model(embed) else None
        self.func: Callable[..., Any] | None = None
        self.afunc: Callable[..., Any] | None = None
        if self.model is None:
            if not callable(embed):
                raise InvalidArgumentError(
                    f"InMemoryStore(index={{'embed': ...}}) takes a function from a list of "
                    f"texts to their vectors, or a langchain Embeddings object; got {embed!r}."
                )
            is_async = inspect.iscoroutinefunction(embed) or inspect.iscoroutinefunction(
                getattr(embed, "__call__", None)  # noqa: B004
            )
            self.afunc, self.func = (embed, None) if is_async else (None, embed)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.model is not None:
            return self.model.embed_documents(texts)
        if self.func is None:
            raise ValueError(
                "The store's embedding function is async (`async def`): use the store's "
                "awaitable methods (aput, asearch), or give it a sync function."
            )
        return self.func(texts)

    def embed_query(self, text: str) -> list[float]:
        if self.model is not None:
            return self.model.embed_query(text)
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.model is not None:
            return await self.model.aembed_documents(texts)
        if self.afunc is None:
            return await asyncio.to_thread(self.embed_documents, texts)
        return await self.afunc(texts)

    async def aembed_query(self, text: str) -> list[float]:
        if self.model is not None:
            return await self.model.aembed_query(text)
        return (await self.aembed_documents([text]))[0]


def _is_model(embed: Any) -> bool:
    return hasattr(embed, "embed_documents") and hasattr(embed, "embed_query")


def _from_provider(name: str) -> Any:
    try:
        from langchain.embeddings import init_embeddings
    except ImportError:
        raise InvalidArgumentError(
            f"InMemoryStore(index={{'embed': {name!r}}}): a 'provider:model' name needs "
            "langchain (>= 0.3.9) and the provider's package; or give a function from a list "
            "of texts to their vectors, or a langchain Embeddings object."
        ) from None
    return init_embeddings(name)


class VectorIndex:
    """The vectors of a store's items, by namespace, key and path, and how to rank them.

    Args:
        config: LangGraph's `IndexConfig`: `embed` (required), `dims` (kept, not checked:
            LangGraph's in-memory store does not check it), `fields` (paths, default `["$"]`:
            the whole value as JSON).

    Raises:
        InvalidArgumentError: not a dict, an unknown key, no `embed`, or `fields` not a
            list of path strings.
    """

    def __init__(self, config: Any, owner: str = "InMemoryStore") -> None:
        if not isinstance(config, Mapping):
            raise InvalidArgumentError(
                f"{owner}(index=...) takes a dict like {{'embed': my_function, 'dims': "
                f"1536, 'fields': ['text']}}; got {type(config).__name__}."
            )
        unknown = [key for key in config if key not in _INDEX_KEYS]
        if unknown or config.get("embed") is None:
            problem = f"unknown keys {unknown}" if unknown else "no 'embed'"
            raise InvalidArgumentError(
                f"{owner}(index=...): {problem}; the keys are {list(_INDEX_KEYS)}, and "
                "'embed' (a function from a list of texts to their vectors, or a langchain "
                "Embeddings object) is required."
            )
        fields = config.get("fields") or [WHOLE]
        if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
            raise InvalidArgumentError(
                f"{owner}(index={{'fields': ...}}) takes a list of paths like ['text', "
                f"'sections[*].body']; got {fields!r}."
            )
        self.config = dict(config)
        self.dims = config.get("dims")
        self.embedder = Embedder(config["embed"])
        self.fields = [(f, f if f == WHOLE else path_tokens(f)) for f in fields]
        self.vectors: dict[tuple[tuple[str, ...], str], dict[str, list[float]]] = {}

    def texts(self, value: dict[str, Any], index: Any) -> list[tuple[str, str]]:
        """`(path, text)` of what a put embeds: the store's fields, or `index`'s (a list of
        paths); none for `index=False`. A path that reaches several texts names each
        `path.i`."""
        if index is False:
            return []
        if index is None:
            paths = self.fields
        elif isinstance(index, list | tuple) and all(isinstance(p, str) for p in index):
            paths = [(p, path_tokens(p)) for p in index]
        else:
            raise InvalidArgumentError(
                f"store.put(..., index=...) takes False, None or a list of paths; got {index!r}."
            )
        found = []
        for path, tokens in paths:
            texts = texts_at(value, tokens)
            if len(texts) == 1:
                found.append((path, texts[0]))
            else:
                found.extend((f"{path}.{i}", text) for i, text in enumerate(texts))
        return found

    def keep(
        self, where: tuple[tuple[str, ...], str], texts: list[tuple[str, str]], vectors: list
    ) -> None:
        """Keep the vectors of an item's texts (one per distinct text, in first-seen order;
        an item's vectors of other paths stay, as in LangGraph's store)."""
        distinct = list(dict.fromkeys(text for _, text in texts))
        if len(vectors) != len(distinct):
            raise ValueError(
                f"The store's embedding function returned {len(vectors)} vectors for "
                f"{len(distinct)} texts; it must return one vector per text, in order."
            )
        by_text = dict(zip(distinct, vectors, strict=True))
        kept = self.vectors.setdefault(where, {})
        for path, text in texts:
            kept[path] = list(by_text[text])

    def rank(
        self, query: list[float], candidates: Iterable[Any], offset: int, limit: int
    ) -> list[tuple[float | None, Any]]:
        """`(score, item)` of the best `limit` items after `offset`, by their best vector's
        cosine similarity to `query`; items without vectors fill what is left unscored."""
        scored, unscored = [], []
        for item in candidates:
            vectors = self.vectors.get((item.namespace, item.key))
            if not vectors:
                unscored.append(item)
                continue
            for score in cosine_scores(query, list(vectors.values())):
                scored.append((score, item))
        scored.sort(key=lambda pair: pair[0], reverse=True)  # (stable: ties keep order)
        seen: set[tuple[tuple[str, ...], str]] = set()
        kept: list[tuple[float | None, Any]] = []
        for score, item in scored:
            where = (item.namespace, item.key)
            if where in seen:
                continue
            seen.add(where)
            if len(seen) > offset + limit:
                break
            if len(seen) > offset:
                kept.append((score, item))
        if unscored and len(kept) < limit:
            kept.extend((None, item) for item in unscored[: limit - len(kept)])
        return kept

    def drop(self, where: tuple[tuple[str, ...], str]) -> None:
        """Forget an item's vectors (it was deleted)."""
        self.vectors.pop(where, None)


def cosine_scores(query: list[float], vectors: list[list[float]]) -> list[float]:
    """The cosine similarity of `query` with each of `vectors` (0 for a zero vector).

    >>> cosine_scores([1.0, 0.0], [[2.0, 0.0], [0.0, 3.0], [0.0, 0.0]])
    [1.0, 0.0, 0.0]
    """
    query_norm = math.sqrt(math.fsum(x * x for x in query))
    scores = []
    for vector in vectors:
        norm = math.sqrt(math.fsum(x * x for x in vector))
        if norm == 0 or query_norm == 0:
            scores.append(0.0)
            continue
        dot = math.fsum(a * b for a, b in zip(query, vector, strict=False))
        scores.append(float(dot / (norm * query_norm)))
    return scores
