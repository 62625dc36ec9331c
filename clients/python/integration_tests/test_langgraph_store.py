"""KnowHubStore against LangGraph's own reference, InMemoryStore: the same behaviour checks run on both,
sync and async (langgraph ships no store conformance suite: langgraph-checkpoint-conformance covers
checkpointers only). Then what only KnowHub does: scopes from namespaces, and another org's token
seeing none of the items."""

import asyncio
import hashlib
import re
import unittest
import uuid
from datetime import datetime
from typing import Any, Dict, List

from hub import hub

from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore

from knowhub import KnowHub, KnowHubError
from knowhub.integrations.langgraph import KnowHubStore

DIMS = 256


def embed(texts: List[str]) -> List[List[float]]:
    """The reference store's embedder: a bag of hashed words (deterministic, no model), so that its query
    ranking follows shared words as KnowHub's full-text does."""
    vectors = []
    for text in texts:
        vector = [0.0] * DIMS
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            if len(word) > 2:
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIMS] += 1.0
        vectors.append(vector)
    return vectors


class StoreChecks:
    """The behaviour checks. A subclass says which store (``make_store``) and whether the async API is used."""

    asynchronous = False

    def make_store(self) -> Any:
        raise NotImplementedError

    def setUp(self) -> None:
        self.store = self.make_store()
        self.root = "t" + uuid.uuid4().hex[:12]  # one namespace root per test: the hub outlives the test

    # The store's API, sync or async.
    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.asynchronous:
            return asyncio.run(getattr(self.store, "a" + name)(*args, **kwargs))
        return getattr(self.store, name)(*args, **kwargs)

    def keys(self, items: List[SearchItem]) -> set:
        return {i.key for i in items}

    def test_put_then_get_gives_the_value_back(self) -> None:
        value = {"text": "Prefers dark mode", "n": 3, "ratio": 0.5, "on": True, "none": None, "tags": ["a", "ü"], "nested": {"x": [1, {"y": "z"}]}}
        self.call("put", (self.root, "prefs"), "ui", value)
        item = self.call("get", (self.root, "prefs"), "ui")
        self.assertEqual((item.value, item.key, item.namespace), (value, "ui", (self.root, "prefs")))
        self.assertIsInstance(item.value["n"], int)
        self.assertIsInstance(item.created_at, datetime)
        self.assertIsInstance(item.updated_at, datetime)
        self.assertIsNone(self.call("get", (self.root, "prefs"), "other"))
        self.assertIsNone(self.call("get", (self.root, "elsewhere"), "ui"))

    def test_put_again_replaces_and_delete_removes(self) -> None:
        ns = (self.root, "facts")
        self.call("put", ns, "k", {"text": "first"})
        self.call("put", ns, "k", {"text": "second", "extra": 1})
        self.assertEqual(self.call("get", ns, "k").value, {"text": "second", "extra": 1})
        self.assertEqual([i.value for i in self.call("search", ns)], [{"text": "second", "extra": 1}])
        self.call("put", ns, "k", {"text": "second", "extra": 1})  # the same value again: nothing changes
        self.assertEqual(len(self.call("search", ns)), 1)
        self.call("delete", ns, "k")
        self.assertIsNone(self.call("get", ns, "k"))
        self.assertEqual(self.call("search", ns), [])
        self.call("delete", ns, "k")  # deleting what is gone is no error
        self.call("put", ns, "k", {"text": "back"})
        self.assertEqual(self.call("get", ns, "k").value, {"text": "back"})

    def test_search_keeps_to_the_namespace_prefix(self) -> None:
        self.call("put", (self.root, "docs", "a"), "1", {"text": "one", "run": self.root})
        self.call("put", (self.root, "docs", "b"), "2", {"text": "two", "run": self.root})
        self.call("put", (self.root, "other"), "3", {"text": "three", "run": self.root})
        self.assertEqual(self.keys(self.call("search", (self.root, "docs"))), {"1", "2"})
        self.assertEqual(self.keys(self.call("search", (self.root, "docs", "a"))), {"1"})
        self.assertEqual(self.keys(self.call("search", (self.root,))), {"1", "2", "3"})
        self.assertEqual(self.call("search", (self.root, "doc")), [])  # a label is matched whole
        # The empty prefix is the whole store: this run's items are found by a field of their value.
        self.assertEqual(self.keys(self.call("search", (), filter={"run": self.root})), {"1", "2", "3"})
        for item in self.call("search", (self.root,)):
            self.assertIsInstance(item, SearchItem)
            self.assertIsNone(item.score)  # no query, no score

    def test_filter_by_value_fields(self) -> None:
        ns = (self.root, "items")
        rows = {
            "a": {"color": "red", "size": 3, "price": 9.5, "sale": True, "dims": {"w": 1}, "labels": ["x", "y"]},
            "b": {"color": "red", "size": 5, "price": 20.0, "sale": False, "dims": {"w": 2}, "labels": ["x"]},
            "c": {"color": "blue", "size": 3.0, "price": 1, "sale": True, "dims": {"w": 1}, "labels": []},
            "d": {"color": "red, dark", "size": "3", "price": 30, "note": "  padded  "},
        }
        for key, value in rows.items():
            self.call("put", ns, key, value)
        cases = [
            ({"color": "red"}, {"a", "b"}),
            ({"size": 3}, {"a", "c"}),  # 3 == 3.0, and the string "3" is not 3
            ({"size": 3.0, "color": "blue"}, {"c"}),
            ({"sale": True}, {"a", "c"}),
            ({"price": {"$gt": 5}}, {"a", "b", "d"}),
            ({"price": {"$gte": 1, "$lt": 10}}, {"a", "c"}),
            ({"color": {"$ne": "red"}}, {"c", "d"}),
            ({"dims": {"w": 1}}, {"a", "c"}),
            ({"labels": ["x", "y"]}, {"a"}),
            ({"color": "red, dark"}, {"d"}),  # a comma: not sent as a tag pair, checked here
            ({"note": "  padded  "}, {"d"}),
            ({"size": "3"}, {"d"}),
            ({"missing": "x"}, set()),
        ]
        for filter, expected in cases:
            with self.subTest(filter=filter):
                self.assertEqual(self.keys(self.call("search", ns, filter=filter)), expected)

    def test_limit_and_offset_page_through_every_item(self) -> None:
        ns = (self.root, "pages")
        for i in range(5):
            self.call("put", ns, f"k{i}", {"i": i})
        pages = [self.call("search", ns, limit=2, offset=offset) for offset in (0, 2, 4)]
        self.assertEqual([len(p) for p in pages], [2, 2, 1])
        self.assertEqual(set().union(*(self.keys(p) for p in pages)), {f"k{i}" for i in range(5)})
        self.assertEqual(self.call("search", ns, limit=2, offset=5), [])
        self.assertEqual(len(self.call("search", ns, limit=3, filter={"i": {"$gte": 1}})), 3)

    def put_topics(self, ns: tuple) -> None:
        self.call("put", ns, "pizza", {"text": "Knead pizza dough for ten minutes and let it rise overnight", "kind": "food"})
        self.call("put", ns, "k8s", {"text": "Kubernetes rolling deployment with readiness probes", "kind": "ops"})
        self.call("put", ns, "tax", {"text": "File the quarterly tax return before the deadline", "kind": "admin"})

    def test_query_ranks_the_related_item_first(self) -> None:
        ns = (self.root, "topics")
        self.put_topics(ns)
        found = self.call("search", ns, query="how long to knead pizza dough")
        self.assertEqual(found[0].key, "pizza")
        self.assertIsInstance(found[0].score, float)
        scores = [i.score for i in found if i.score is not None]
        self.assertEqual(scores, sorted(scores, reverse=True))
        self.assertEqual(self.call("search", ns, query="kubernetes readiness probes deployment", limit=1)[0].key, "k8s")
        self.assertEqual(len(self.call("search", ns, query="kubernetes readiness probes", limit=1)), 1)
        # Elsewhere in the store the same words find nothing of this namespace.
        self.assertNotIn("pizza", self.keys(self.call("search", (self.root, "elsewhere"), query="pizza dough")))

    def test_query_with_a_filter(self) -> None:
        ns = (self.root, "topics")
        self.put_topics(ns)
        self.call("put", ns, "pizza2", {"text": "Pizza dough with less yeast rises slower", "kind": "notes"})
        found = self.call("search", ns, query="pizza dough yeast", filter={"kind": "notes"})
        self.assertEqual([i.key for i in found], ["pizza2"])
        self.assertEqual(self.call("search", ns, query="pizza dough", filter={"kind": "nothing"}), [])

    def test_an_item_put_with_index_false_is_not_ranked_by_a_query(self) -> None:
        ns = (self.root, "hidden")
        self.call("put", ns, "seen", {"text": "sourdough starter feeding schedule"})
        self.call("put", ns, "unseen", {"text": "sourdough starter feeding schedule, a secret copy"}, index=False)
        found = self.call("search", ns, query="sourdough starter feeding")
        self.assertEqual(found[0].key, "seen")
        self.assertTrue(all(i.score is None for i in found if i.key == "unseen"))  # never ranked (the reference lists it last, unscored)
        self.assertEqual(self.call("get", ns, "unseen").value["text"], "sourdough starter feeding schedule, a secret copy")
        self.assertEqual(self.keys(self.call("search", ns)), {"seen", "unseen"})

    def test_index_fields_choose_the_text_a_query_ranks_by(self) -> None:
        ns = (self.root, "indexed")
        self.call("put", ns, "a", {"title": "Quarterly tax return checklist", "body": "gather receipts"}, index=["title"])
        self.call("put", ns, "b", {"title": "Team offsite agenda", "body": "book the venue"}, index=["title"])
        self.assertEqual(self.call("search", ns, query="tax return checklist")[0].key, "a")

    def test_list_namespaces(self) -> None:
        r = self.root
        for ns in [(r, "a", "x"), (r, "a", "y", "deep"), (r, "b", "x"), (r, "c")]:
            self.call("put", ns, "k", {"v": 1})
        self.call("put", (r, "a", "x"), "k2", {"v": 2})  # two items, one namespace
        listed = self.call("list_namespaces", prefix=(r,))
        self.assertEqual(listed, [(r, "a", "x"), (r, "a", "y", "deep"), (r, "b", "x"), (r, "c")])
        self.assertEqual(self.call("list_namespaces", prefix=(r, "a")), [(r, "a", "x"), (r, "a", "y", "deep")])
        self.assertEqual(self.call("list_namespaces", prefix=(r,), max_depth=2), [(r, "a"), (r, "b"), (r, "c")])
        self.assertEqual(self.call("list_namespaces", prefix=(r,), suffix=("x",)), [(r, "a", "x"), (r, "b", "x")])
        self.assertEqual(self.call("list_namespaces", prefix=(r, "*", "x")), [(r, "a", "x"), (r, "b", "x")])
        self.assertEqual(self.call("list_namespaces", prefix=(r,), suffix=("*", "deep")), [(r, "a", "y", "deep")])
        self.assertEqual(self.call("list_namespaces", prefix=(r,), limit=2, offset=1), [(r, "a", "y", "deep"), (r, "b", "x")])
        self.assertEqual(self.call("list_namespaces", prefix=(r, "zzz")), [])

    def test_batch_runs_every_kind_of_operation(self) -> None:
        ns = (self.root, "batch")
        self.call("put", ns, "old", {"text": "already there"})
        ops = [
            GetOp(ns, "old"),
            SearchOp(ns, filter={"text": "already there"}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", (self.root,)),)),
            PutOp(ns, "new", {"text": "put in a batch"}),
            GetOp(ns, "missing"),
        ]
        results = asyncio.run(self.store.abatch(ops)) if self.asynchronous else self.store.batch(ops)
        self.assertEqual(len(results), 5)
        self.assertEqual(results[0].value, {"text": "already there"})
        self.assertEqual([i.key for i in results[1]], ["old"])
        self.assertEqual(results[2], [ns])
        self.assertEqual((results[3], results[4]), (None, None))
        self.assertEqual(self.call("get", ns, "new").value, {"text": "put in a batch"})

    def test_invalid_namespaces_are_refused(self) -> None:
        for ns in [("langgraph", "x"), (self.root, "a.b"), (self.root, ""), ()]:
            with self.subTest(ns=ns), self.assertRaises(InvalidNamespaceError):
                self.call("put", ns, "k", {"v": 1})


class InMemoryStoreReference(StoreChecks, unittest.TestCase):
    """The checks on LangGraph's InMemoryStore, with an embedder so that a query ranks."""

    def make_store(self) -> Any:
        return InMemoryStore(index={"dims": DIMS, "embed": embed})


class InMemoryStoreReferenceAsync(InMemoryStoreReference):
    asynchronous = True


class KnowHubStoreChecks(StoreChecks, unittest.TestCase):
    """The same checks on KnowHubStore, against a real server, as alice of org acme."""

    def make_store(self) -> Any:
        return KnowHubStore(KnowHub(hub()["url"], hub()["alice"]))


class KnowHubStoreChecksAsync(KnowHubStoreChecks):
    asynchronous = True


class KnowHubScopesTest(unittest.TestCase):
    """What the reference cannot show: where items live in KnowHub, and that another org sees none of them."""

    def setUp(self) -> None:
        self.url, self.alice_token, self.eve_token = hub()["url"], hub()["alice"], hub()["eve"]
        self.alice = KnowHubStore(KnowHub(self.url, self.alice_token))
        self.eve = KnowHubStore(KnowHub(self.url, self.eve_token))
        self.root = "s" + uuid.uuid4().hex[:12]

    def entry(self, store: KnowHubStore, ns: tuple, key: str) -> Dict[str, Any]:
        return store.client.get(store._id(ns, key))

    def test_items_live_in_the_callers_org_or_the_scopes_their_namespace_names(self) -> None:
        self.alice.put((self.root, "m"), "k", {"text": "team memory"})
        self.alice.put(("user:alice", self.root), "k", {"text": "alice only"})
        self.assertEqual(self.entry(self.alice, (self.root, "m"), "k")["scopes"], ["org:acme"])
        mine = self.entry(self.alice, ("user:alice", self.root), "k")
        self.assertEqual((mine["scopes"], mine["owner"]), (["user:alice"], "user:alice"))
        self.assertEqual(mine["tags"]["lg_ns"], f'["user:alice","{self.root}"]')
        self.assertEqual(self.alice.list_namespaces(prefix=("user:alice", self.root)), [("user:alice", self.root)])
        with self.assertRaises(KnowHubError) as caught:
            self.alice.put(("org:evil", self.root), "k", {"text": "into another org"})
        self.assertIn(caught.exception.code, ("forbidden", "invalid_scope"))

    def test_another_orgs_token_sees_none_of_it(self) -> None:
        ns = (self.root, "memories")
        self.alice.put(ns, "food", {"text": "Alice likes pizza", "run": self.root})
        self.alice.put(("org:acme", self.root), "plan", {"text": "Q3 pizza launch plan", "run": self.root})
        # Eve's store, also told to look in acme's scope (so it asks for acme's very ids), sees nothing.
        eve_in_acme = KnowHubStore(KnowHub(self.url, self.eve_token), scope="org:acme")
        for eve in (self.eve, eve_in_acme):
            self.assertIsNone(eve.get(ns, "food"))
            self.assertIsNone(eve.get(("org:acme", self.root), "plan"))
            self.assertEqual(eve.search((self.root,)), [])
            self.assertEqual(eve.search((), filter={"run": self.root}), [])
            self.assertEqual(eve.search((), query="pizza"), [])
            self.assertEqual(eve.list_namespaces(prefix=(self.root,)), [])
        self.assertEqual(KnowHub(self.url, self.eve_token).list(tags={"lgv_run": self.root})["count"], 0)
        with self.assertRaises(KnowHubError):
            eve_in_acme.put(ns, "food", {"text": "overwritten by eve"})
        eve_in_acme.delete(ns, "food")  # an id eve cannot see: nothing happens
        self.assertEqual(self.alice.get(ns, "food").value["text"], "Alice likes pizza")
        # The same namespace and key in eve's org is another item: no collision.
        self.eve.put(ns, "food", {"text": "Eve likes sushi"})
        self.assertEqual(self.eve.get(ns, "food").value["text"], "Eve likes sushi")
        self.assertEqual(self.alice.get(ns, "food").value["text"], "Alice likes pizza")

    def test_a_value_with_more_fields_than_tags_is_still_found_by_a_filter(self) -> None:
        ns = (self.root, "wide")
        wide = {f"f{i}": i for i in range(60)}
        self.alice.put(ns, "wide", wide)
        self.alice.put(ns, "narrow", {"f3": 3})
        self.assertTrue(self.entry(self.alice, ns, "wide")["tags"]["lg_vpartial"])
        self.assertEqual({i.key for i in self.alice.search(ns, filter={"f3": 3})}, {"wide", "narrow"})
        self.assertEqual({i.key for i in self.alice.search(ns, filter={"f59": 59})}, {"wide"})


if __name__ == "__main__":
    unittest.main()
