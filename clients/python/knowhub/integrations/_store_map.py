"""How a LangGraph store item is a KnowHub entry, and back (standard library only; the store itself is
``knowhub.integrations.langgraph``). docs/integrations.md says the same in prose.

One item is one entry:

- ``id``: ``langgraph-`` and 40 hex digits of sha256 over (scopes, namespace, key): the same item is
  the same entry on every call (``get``, ``put`` and ``delete`` are one request), and two tenants'
  items of the same namespace and key never collide (their scopes differ);
- ``scopes``: the namespace's labels that are KnowHub scopes (``user:alice``, ``org:acme``), else the
  store's scope (by default the caller's org, else its own id);
- ``content``: the value as canonical JSON (sorted keys): ``json.loads(content)`` is the value;
- ``task``: the text search ranks by: the value's text (its string leaves; the ``index`` fields when
  given), or ``namespace/key`` for an item put with ``index=False``;
- ``tags``: ``lg_item`` (every item), ``lg_ns`` (the namespace as a JSON array: reversible),
  ``lg_ns1`` … ``lg_nsN`` (one label each, for prefixes), ``lg_key``, ``lg_index: false`` (put with
  ``index=False``), and ``lgv_<field>`` for each top-level field holding a string, a number or a
  boolean (the text of its value: what equality filters are pushed to), or ``lg_vpartial: true``
  when more fields hold one than an entry has tags for.
"""

import hashlib
import json
import math
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

Namespace = Tuple[str, ...]

MARK = "lg_item"
NS = "lg_ns"
KEY = "lg_key"
UNINDEXED = "lg_index"
PARTIAL = "lg_vpartial"
FIELD = "lgv_"

#: Tags an entry may have (the server's limit) and the longest tag text.
MAX_TAGS = 50
MAX_TAG_TEXT = 1000
#: Labels a namespace may have here: each takes a tag (``lg_nsN``), and the value's fields need the rest.
MAX_DEPTH = 10
#: Pairs one tag filter may hold (the server's limit).
MAX_FILTER_PAIRS = 20
#: The longest task the server takes.
MAX_TASK = 10_000

_SCOPE = re.compile(r"^(?:user|agent|project|team|org):[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
#: A value field whose name can be a tag filter's key (no colon, comma or space; the tag key stays within 64).
_FIELD_NAME = re.compile(r"^[^:,\s]{1,60}$")


def scope_labels(namespace: Sequence[str]) -> List[str]:
    """The labels of a namespace that are KnowHub scopes (``kind:id``), sorted and distinct.

    >>> scope_labels(("org:acme", "memories", "user:alice"))
    ['org:acme', 'user:alice']
    """
    return sorted({label for label in namespace if _SCOPE.match(label)})


def item_id(scopes: Sequence[str], namespace: Sequence[str], key: str) -> str:
    """The entry id of an item: deterministic, and different for different scopes.

    >>> item_id(["org:acme"], ("memories",), "k1") == item_id(["org:acme"], ("memories",), "k1")
    True
    >>> item_id(["org:acme"], ("memories",), "k1") == item_id(["org:evil"], ("memories",), "k1")
    False
    """
    material = json.dumps([sorted(scopes), list(namespace), key], ensure_ascii=False, separators=(",", ":"))
    return "langgraph-" + hashlib.sha256(material.encode("utf-8")).hexdigest()[:40]


def canonical_json(value: Any) -> str:
    """The value as stored: JSON with sorted keys, UTF-8 kept.

    >>> canonical_json({"b": 1, "a": "é"})
    '{"a":"é","b":1}'
    """
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def namespace_json(namespace: Sequence[str]) -> str:
    """The namespace as the ``lg_ns`` tag holds it.

    >>> namespace_json(("users", "alice"))
    '["users","alice"]'
    """
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


def scalar_text(value: Any) -> Optional[str]:
    """The text of a string, number or boolean as a ``lgv_`` tag holds it, such that values Python finds
    equal get the same text (``True``, ``1`` and ``1.0`` are all ``"1"``); ``None`` for anything else
    (lists, objects, null, NaN, infinities, strings longer than a tag).

    >>> [scalar_text(v) for v in ("dark", True, 1, 1.0, 2.5, None, [1])]
    ['dark', '1', '1', '1', '2.5', None, None]
    """
    if isinstance(value, str):
        return value if len(value) <= MAX_TAG_TEXT else None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float) and math.isfinite(value):
        text = str(int(value)) if value.is_integer() else repr(value)
    else:
        return None
    return text if len(text) <= MAX_TAG_TEXT else None


def check_namespace(namespace: Sequence[str], key: str) -> None:
    """Refuses what an entry cannot hold (a clear ``ValueError`` rather than a server's validation error)."""
    if len(namespace) > MAX_DEPTH:
        raise ValueError(f"KnowHubStore keeps namespaces of at most {MAX_DEPTH} labels; {namespace_json(namespace)} has {len(namespace)}")
    if len(namespace_json(namespace)) > MAX_TAG_TEXT:
        raise ValueError(f"KnowHubStore keeps namespaces of at most {MAX_TAG_TEXT} characters as JSON")
    if not key or len(key) > MAX_TAG_TEXT:
        raise ValueError(f"KnowHubStore keeps keys of 1 to {MAX_TAG_TEXT} characters")


def entry_tags(namespace: Namespace, key: str, value: Mapping[str, Any], indexed: bool) -> Dict[str, Any]:
    """Every tag of an item's entry (see the module comment)."""
    tags: Dict[str, Any] = {MARK: True, NS: namespace_json(namespace), KEY: key}
    tags.update({f"lg_ns{i}": label for i, label in enumerate(namespace, 1)})
    if not indexed:
        tags[UNINDEXED] = False
    fields = {f"{FIELD}{name}": text for name, v in sorted(value.items()) if _FIELD_NAME.match(name) and (text := scalar_text(v)) is not None}
    # All of the fields or none of them: a filter pushed to the server must find every item whose field matches.
    if len(tags) + len(fields) < MAX_TAGS:
        tags.update(fields)
    else:
        tags[PARTIAL] = True
    return tags


def texts(value: Any) -> List[str]:
    """The string leaves of a value, depth first in key order.

    >>> texts({"b": ["x", {"c": "y"}], "a": "z", "n": 3})
    ['z', 'x', 'y']
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [t for k in sorted(value) for t in texts(value[k])]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in texts(v)]
    return []


def entry_task(namespace: Namespace, key: str, value: Mapping[str, Any], fields: Optional[Iterable[Any]], indexed: bool) -> str:
    """The entry's task: the text search ranks the item by. ``fields`` are the values at the item's
    ``index`` paths (``None``: the whole value)."""
    found = texts(list(fields) if fields is not None else value) if indexed else []
    text = "\n".join(t.strip() for t in found if t.strip())
    return (text or f"{'/'.join(namespace)}/{key}")[:MAX_TASK]


def item_from_entry(entry: Mapping[str, Any]) -> Optional[Tuple[Namespace, str, Dict[str, Any]]]:
    """An entry back as (namespace, key, value), or ``None`` when it is not a store item. A content that
    is no longer a JSON object (edited by hand in the dashboard) is the value ``{"content": text}``."""
    tags = entry.get("tags") or {}
    if tags.get(MARK) is not True or not isinstance(tags.get(NS), str) or not isinstance(tags.get(KEY), str):
        return None
    namespace = tuple(json.loads(tags[NS]))
    try:
        value = json.loads(entry["content"])
    except ValueError:
        value = None
    if not isinstance(value, dict):
        value = {"content": entry["content"]}
    return namespace, tags[KEY], value


def prefix_pairs(prefix: Sequence[str]) -> Dict[str, str]:
    """The tag filter that holds the items under a namespace prefix (``"*"`` labels match anything, so they
    are left to the caller), without the labels a tag filter cannot carry (checked by the caller too)."""
    pairs = {MARK: "true"}
    for i, label in enumerate(prefix, 1):
        if label != "*" and filter_text_ok(label):
            pairs[f"lg_ns{i}"] = label
    return pairs


def filter_text_ok(text: str) -> bool:
    """Whether a text can be the value of a ``key:value`` filter pair as sent (comma-joined, each pair trimmed)."""
    return 0 < len(text) <= MAX_TAG_TEXT and "," not in text and text == text.strip()


def value_pairs(filter: Optional[Mapping[str, Any]]) -> Dict[str, str]:
    """The equality conditions of a LangGraph ``filter`` the server can check (``{"field": scalar}``); the
    rest (operators, nested objects, lists, null) is checked here. What is pushed only narrows:
    every condition is checked again on the items that come back."""
    pairs: Dict[str, str] = {}
    for name, wanted in (filter or {}).items():
        text = scalar_text(wanted)
        if _FIELD_NAME.match(name) and text is not None and filter_text_ok(text):
            pairs[f"{FIELD}{name}"] = text
    return pairs


def matches(value: Mapping[str, Any], filter: Optional[Mapping[str, Any]]) -> bool:
    """LangGraph's filter semantics (as its InMemoryStore): every field equal, or every operator
    (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``) holding; nested objects compared field by field."""
    return all(_compare(value.get(name), wanted) for name, wanted in (filter or {}).items())


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(actual, op, operand) for op, operand in wanted.items())
        return isinstance(actual, Mapping) and all(_compare(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return isinstance(actual, (list, tuple)) and len(actual) == len(wanted) and all(_compare(a, w) for a, w in zip(actual, wanted))
    return bool(actual == wanted)


def _operator(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"Unsupported operator: {op}")
    if actual is None:
        return False
    a, b = float(actual), float(operand)
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def namespace_matches(namespace: Namespace, match_type: str, path: Sequence[str]) -> bool:
    """A ``list_namespaces`` condition (``prefix`` or ``suffix``, ``"*"`` matching any label)."""
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)
