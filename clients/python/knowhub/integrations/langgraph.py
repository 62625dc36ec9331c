"""``KnowHubStore``: a LangGraph ``BaseStore`` whose items are KnowHub entries, so that a LangGraph
agent's long-term memory is KnowHub in one line::

    from knowhub.integrations.langgraph import KnowHubStore
    graph = builder.compile(store=KnowHubStore())  # KNOWHUB_URL / KNOWHUB_TOKEN

Every operation is one or a few requests of the HTTP API, under the caller's token: KnowHub's scopes
decide what the store sees (another org's token sees none of its items). How an item maps onto an
entry (id, scopes, content, task, tags) is in ``knowhub.integrations._store_map`` and
docs/integrations.md.

- ``get``: ``GET /api/knowledge/{id}`` (the id follows from scopes, namespace and key);
- ``put``: ``POST /api/knowledge`` with that id (an idempotent create), then ``PATCH`` when the item
  changed; ``delete`` (``put`` of ``None``): ``DELETE``;
- ``search`` with a ``query``: KnowHub's hybrid search (``GET /api/knowledge/search``) within the
  namespace prefix's tags, ranked by relevance (``score``: 1 for the best); without one: the items
  newest first (``GET /api/knowledge``). ``filter``'s equality conditions on top-level fields are
  sent as tags; every condition is checked here on what comes back;
- ``list_namespaces``: the namespaces of the items the caller sees, read from their tags.

Needs ``pip install 'knowhub[langgraph]'``.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ._require import require

require("langgraph", "langgraph", "langgraph")

from langgraph.store.base import (  # noqa: E402
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    tokenize_path,
)

from ..client import KnowHub  # noqa: E402
from ..errors import KnowHubError  # noqa: E402
from . import _store_map as m  # noqa: E402

#: Results one search request may return (the API's ``top_k`` and ``limit`` maximum).
PAGE = 100


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _item(entry: Dict[str, Any], score: Optional[float] = None, search: bool = False) -> Optional[Item]:
    found = m.item_from_entry(entry)
    if found is None or entry.get("status", "active") != "active":
        return None
    namespace, key, value = found
    created, updated = _time(entry["created_at"]), _time(entry.get("updated_at") or entry["created_at"])
    if search:
        return SearchItem(namespace, key, value, created, updated, score)
    return Item(value=value, key=key, namespace=namespace, created_at=created, updated_at=updated)


class KnowHubStore(BaseStore):
    """A LangGraph store on a KnowHub server.

    ``client``: a :class:`knowhub.KnowHub` (default: from ``url`` and ``token``, else ``KNOWHUB_URL`` /
    ``KNOWHUB_TOKEN``). ``scope``: where items whose namespace names no scope go (default: the caller's
    org, else its own id, from ``GET /api/me`` once). ``types``: the entries' types (default ``usecase``).
    ``index``: the value fields whose text search ranks by (default: all of its text), as LangGraph's
    ``IndexConfig`` ``fields``.

    >>> store = KnowHubStore(url="http://127.0.0.1:8420")  # doctest: +SKIP
    >>> store.put(("memories", "alice"), "food", {"text": "likes pizza"})  # doctest: +SKIP
    >>> store.search(("memories", "alice"), query="what food")[0].value  # doctest: +SKIP
    {'text': 'likes pizza'}
    """

    supports_ttl = False

    def __init__(
        self,
        client: Optional[KnowHub] = None,
        *,
        url: Optional[str] = None,
        token: Optional[str] = None,
        scope: Optional[str] = None,
        types: Sequence[str] = ("usecase",),
        index: Optional[Sequence[str]] = None,
    ) -> None:
        self.client = client if client is not None else KnowHub(url, token)
        self.types = list(types)
        self.index_fields = list(index) if index else None
        self._scope = scope

    # -- batch ---------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> List[Result]:
        """Runs the operations in order, one after the other (a put is seen by the ops after it)."""
        results: List[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                results.append(self._put(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        """:meth:`batch` in a worker thread: the event loop never waits on the network."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- where an item lives --------------------------------------------------------------
    def default_scope(self) -> str:
        """The scope of items whose namespace names none: the one given, else the caller's org, else its own id."""
        if self._scope is None:
            principal = self.client.me()["principal"]
            kinds = [k for k in ("org", "user", "agent", "project", "team") if principal.get(k)]
            if not kinds:
                raise KnowHubError("forbidden", "KnowHubStore: the caller has no id to keep items under; pass scope=")
            self._scope = f"{kinds[0]}:{principal[kinds[0]]}"
        return self._scope

    def _scopes(self, namespace: m.Namespace) -> List[str]:
        return m.scope_labels(namespace) or [self.default_scope()]

    def _id(self, namespace: m.Namespace, key: str) -> str:
        return m.item_id(self._scopes(namespace), namespace, key)

    # -- get, put, delete -----------------------------------------------------------------
    def _get(self, op: GetOp) -> Optional[Item]:
        try:
            entry = self.client.get(self._id(tuple(op.namespace), op.key))
        except KnowHubError as error:
            if error.code == "not_found":
                return None
            raise
        item = _item(entry)
        return item if item is not None and item.namespace == tuple(op.namespace) and item.key == op.key else None

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        m.check_namespace(namespace, op.key)
        entry_id = self._id(namespace, op.key)
        if op.value is None:
            try:
                self.client.delete(entry_id)
            except KnowHubError as error:
                if error.code != "not_found":
                    raise
            return None
        value = dict(op.value)
        indexed = op.index is not False
        task = m.entry_task(namespace, op.key, value, self._index_texts(value, op.index), indexed)
        content, tags = m.canonical_json(value), m.entry_tags(namespace, op.key, value, indexed)
        try:
            saved = self.client.save(task, content, self.types, tags=tags, scopes=self._scopes(namespace), id=entry_id)
        except KnowHubError as error:
            if error.code != "conflict":
                raise
            saved = None
        if saved is None or (saved.get("existed") and (saved.get("tags") != tags or saved.get("types") != self.types)):
            self.client.edit(entry_id, task=task, content=content, types=self.types, tags=tags, reason="LangGraph store put")
        return None

    def _index_texts(self, value: Dict[str, Any], index: Any) -> Optional[List[Any]]:
        """The values at the item's index paths (``None``: the whole value is the text)."""
        paths = index if isinstance(index, list) else self.index_fields
        if not paths or paths == ["$"]:
            return None
        return [text for path in paths for text in get_text_at_path(value, tokenize_path(path))]

    # -- search ---------------------------------------------------------------------------
    def _search(self, op: SearchOp) -> List[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        pushed = m.value_pairs(op.filter)
        tags = self._filter(m.prefix_pairs(prefix), pushed)
        # Every candidate is checked again here; without such checks the first offset + limit are enough.
        exhaustive = bool(op.filter) or any(f"lg_ns{i}" not in tags for i in range(1, len(prefix) + 1))
        candidates = self._candidates(op, tags, exhaustive)
        # Items with more scalar fields than tags mirror none of them: found by their flag, not by the pushed filter.
        if pushed and len(tags) > len(m.prefix_pairs(prefix)):
            candidates += self._candidates(op, {**m.prefix_pairs(prefix), m.PARTIAL: "true"}, exhaustive)
            if op.query:
                candidates.sort(key=lambda pair: -(pair[1] or 0.0))
            else:
                candidates.sort(key=lambda pair: str(pair[0].get("created_at")), reverse=True)
        page = self._checked(op, prefix, candidates)[op.offset : op.offset + op.limit]
        if op.query:
            page = self._full_entries(page)  # a search result has no times: the entries have
        return [item for entry, score in page if (item := _item(entry, score, search=True)) is not None]  # type: ignore[misc]

    @staticmethod
    def _checked(op: SearchOp, prefix: m.Namespace, candidates: List[Tuple[Dict[str, Any], Optional[float]]]) -> List[Tuple[Dict[str, Any], Optional[float]]]:
        """The candidates that are items under the prefix, match the whole filter, and (for a query) were indexed, once each."""
        kept: List[Tuple[Dict[str, Any], Optional[float]]] = []
        seen: Set[Tuple[m.Namespace, str]] = set()
        for entry, score in candidates:
            found = m.item_from_entry(entry)
            if found is None or found[0][: len(prefix)] != prefix or found[:2] in seen:
                continue
            if op.query and (entry.get("tags") or {}).get(m.UNINDEXED) is False:
                continue  # put with index=False: not found by a query
            if m.matches(found[2], op.filter):
                seen.add(found[:2])
                kept.append((entry, score))
        return kept

    def _full_entries(self, page: List[Tuple[Dict[str, Any], Optional[float]]]) -> List[Tuple[Dict[str, Any], Optional[float]]]:
        """The entries of a page of search results, read in parallel (one gone meanwhile is left out)."""

        def read(pair: Tuple[Dict[str, Any], Optional[float]]) -> Optional[Tuple[Dict[str, Any], Optional[float]]]:
            try:
                return self.client.get(pair[0]["id"]), pair[1]
            except KnowHubError as error:
                if error.code == "not_found":
                    return None
                raise

        if not page:
            return []
        with ThreadPoolExecutor(max_workers=min(8, len(page))) as pool:
            return [pair for pair in pool.map(read, page) if pair is not None]

    @staticmethod
    def _filter(prefix: Dict[str, str], pushed: Dict[str, str]) -> Dict[str, str]:
        """The prefix's pairs, then as many of the filter's as the server takes in one request."""
        room = m.MAX_FILTER_PAIRS - len(prefix)
        return {**prefix, **dict(list(pushed.items())[: max(room, 0)])}

    def _candidates(self, op: SearchOp, tags: Dict[str, str], exhaustive: bool) -> List[Tuple[Dict[str, Any], Optional[float]]]:
        """Entries with these tags: ranked by the query (with their relevance: the best 100 at most), else newest
        first, ``offset + limit`` of them or, when the caller checks more than the tags (``exhaustive``), all."""
        wanted = op.offset + op.limit
        if op.query:
            found = self.client.search(op.query, top_k=min(PAGE, max(wanted * 2, wanted + 10)), min_score=0, explain=True, tags=tags)
            return [(e, float((e.get("explain") or {}).get("relevance", 0.0))) for e in found["results"]]
        out: List[Tuple[Dict[str, Any], Optional[float]]] = []
        cursor: Optional[str] = None
        while True:
            page = self.client.list(PAGE, cursor=cursor, tags=tags)
            out += [(e, None) for e in page["items"]]
            cursor = page.get("next_cursor")
            if not cursor or (len(out) >= wanted and not exhaustive):
                return out

    # -- namespaces -----------------------------------------------------------------------
    def _list_namespaces(self, op: ListNamespacesOp) -> List[Tuple[str, ...]]:
        conditions = list(op.match_conditions or ())
        prefix = next((tuple(c.path) for c in conditions if c.match_type == "prefix"), ())
        found: Set[m.Namespace] = set()
        cursor: Optional[str] = None
        while True:
            page = self.client.list(PAGE, cursor=cursor, tags=m.prefix_pairs(prefix))
            for entry in page["items"]:
                item = m.item_from_entry(entry)
                if item is not None and all(m.namespace_matches(item[0], c.match_type, c.path) for c in conditions):
                    found.add(item[0][: op.max_depth] if op.max_depth is not None else item[0])
            cursor = page.get("next_cursor")
            if not cursor:
                break
        return sorted(found)[op.offset : op.offset + op.limit]


__all__ = ["KnowHubStore"]
