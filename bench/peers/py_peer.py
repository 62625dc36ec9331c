"""Mem0 and LangGraph's store as systems of KnowHub's side-by-side (issue 44, bench/peers/protocol.ts).

One JSON object a line on stdin, one answer a line on stdout; one process per system and set.

    python py_peer.py mem0 --url http://127.0.0.1:P/v1 --model multilingual-e5-small-q4
    python py_peer.py langgraph --url …            # InMemoryStore with a semantic index
    python py_peer.py langgraph-noindex --url …    # InMemoryStore as it comes (no index)

The model's convention (multilingual-e5: a query and a passage are embedded differently) is sent
as `input_type` by each adapter: Mem0's OpenAI embedder sends none, so its embed calls are
wrapped (Mem0 tells a search from an add by `memory_action`); LangGraph calls a LangChain
`Embeddings`, whose `embed_query` and `embed_documents` are the two kinds.
"""

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
import urllib.request

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("OPENAI_API_KEY", "unused")


def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_s():
    times = os.times()
    return times.user + times.system


class Embed:
    """POST /v1/embeddings with the model's input_type (the server adds e5's prefixes)."""

    def __init__(self, url, model):
        self.url = url.rstrip("/") + "/embeddings"
        self.model = model

    def __call__(self, texts, kind):
        body = json.dumps({"model": self.model, "input": texts, "input_type": kind}).encode()
        request = urllib.request.Request(self.url, data=body, headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as response:
            data = json.load(response)["data"]
        return [item["embedding"] for item in sorted(data, key=lambda d: d["index"])]


class Mem0Peer:
    def __init__(self, url, model):
        from mem0 import Memory

        self.dir = tempfile.mkdtemp(prefix="knowhub-peers-mem0-")
        atexit.register(shutil.rmtree, self.dir, True)
        config = {
            # Mem0's default vector store (Qdrant), local and in memory (on_disk False, its default), in a
            # folder of this process's own rather than the shared default /tmp/qdrant.
            "vector_store": {
                "provider": "qdrant",
                "config": {"collection_name": "bench", "embedding_model_dims": 384, "path": os.path.join(self.dir, "qdrant")},
            },
            "embedder": {"provider": "openai", "config": {"model": model, "openai_base_url": url, "api_key": "unused"}},
            # Never called: add(infer=False) stores the text as given.
            "llm": {"provider": "openai", "config": {"model": "unused", "openai_base_url": url, "api_key": "unused"}},
            "history_db_path": os.path.join(self.dir, "history.db"),
        }
        self.memory = Memory.from_config(config)
        embed = Embed(url, model)
        embedder = self.memory.embedding_model
        # Mem0's own embed replaces newlines by spaces; so does this, and adds the input type.
        embedder.embed = lambda text, memory_action=None: embed(
            [text.replace("\n", " ")], "query" if memory_action == "search" else "passage"
        )[0]
        embedder.embed_batch = lambda texts, memory_action="add": embed(
            [t.replace("\n", " ") for t in texts], "query" if memory_action == "search" else "passage"
        )
        self.doc_of = {}

    def load(self, docs):
        for doc in docs:
            result = self.memory.add(doc["text"], user_id=doc["scope"], metadata={"doc_id": doc["doc_id"]}, infer=False)
            for item in result.get("results", []):
                self.doc_of[item["id"]] = doc["doc_id"]

    def search(self, q, scope, k):
        # Its documented defaults: top_k 20, threshold 0.1; k is the figure's cut-off (10 or 5).
        found = self.memory.search(q, filters={"user_id": scope}, top_k=k or 20)
        ids = []
        for item in found.get("results", []):
            doc = (item.get("metadata") or {}).get("doc_id") or self.doc_of.get(item["id"], item["id"])
            ids.append(doc)
        return ids


class LangGraphPeer:
    def __init__(self, url, model, index):
        from langchain_core.embeddings import Embeddings
        from langgraph.store.memory import InMemoryStore

        embed = Embed(url, model)

        class E5(Embeddings):
            def embed_documents(self, texts):
                return embed(list(texts), "passage")

            def embed_query(self, text):
                return embed([text], "query")[0]

        self.store = InMemoryStore(index={"dims": 384, "embed": E5(), "fields": ["text"]}) if index else InMemoryStore()

    def load(self, docs):
        # store.put, one document at a time: the API its docs give (batch() is marked internal, and
        # InMemoryStore.batch fails when two puts of one batch hold the same text: it embeds each
        # distinct text once and then counts one vector short, "Number of embeddings (63) does not
        # match number of indices (64)", langgraph 1.2.22, on LongMemEval's repeated turns).
        for d in docs:
            self.store.put(("bench", d["scope"]), d["key"], {"text": d["text"], "doc_id": d["doc_id"]})

    def search(self, q, scope, k):
        return [item.value["doc_id"] for item in self.store.search(("bench", scope), query=q, limit=k or 10)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("system", choices=["mem0", "langgraph", "langgraph-noindex"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    # Made before the first request: the load measures storing, not opening a store.
    if args.system == "mem0":
        peer = Mem0Peer(args.url, args.model)
    else:
        peer = LangGraphPeer(args.url, args.model, index=args.system == "langgraph")
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            op = request["op"]
            if op == "stats":
                reply = {"cpu_s": cpu_s(), "rss_mb": rss_mb()}
            elif op == "load":
                peer.load(request["docs"])
                reply = {"ok": True}
            elif op == "search":
                reply = {"ids": peer.search(request["q"], request["scope"], request.get("k"))}
            else:
                reply = {"error": f"unknown op {op}"}
        except Exception as error:  # reported to the harness, which prints it in the system's row
            import traceback

            reply = {"error": f"{type(error).__name__}: {error}\n{traceback.format_exc()[-1500:]}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
