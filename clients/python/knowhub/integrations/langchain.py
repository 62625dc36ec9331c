"""KnowHub for LangChain: the seed-003 tools as ``StructuredTool`` s and a retriever over ``knowledge_search``.

- :func:`knowhub_tools`: ``knowledge_search``, ``knowledge_save``, ``knowledge_update``, … ``goal``, with
  the seeds' names and arguments. Each is the :class:`knowhub.tools.Tools` method of that name, and its
  arguments' JSON Schema is the one definition every KnowHub tool has (``knowhub._tool_specs``,
  generated from the TypeScript tools): no second definition. A call answers the tool's text (knowledge
  wrapped as data, as the MCP server answers it), with the API's answer as the message's artifact; a
  failed call answers its error text with ``status="error"``, for the model to read.
- :class:`KnowHubRetriever`: ``GET /api/knowledge/search`` as LangChain ``Document`` s.

Needs ``pip install 'knowhub[langchain]'``.

>>> from knowhub.integrations.langchain import knowhub_tools  # doctest: +SKIP
>>> agent = create_agent(model, knowhub_tools())  # doctest: +SKIP
"""

import asyncio
import copy
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._require import require

require("langchain_core", "langchain", "langchain")

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.tools import StructuredTool, ToolException  # noqa: E402

from .._tool_specs import SPECS  # noqa: E402
from ..client import KnowHub  # noqa: E402
from ..tools import SEED_002_ALIASES, Tools  # noqa: E402


def _spec(name: str) -> Dict[str, Any]:
    """The tool's one definition; seed 002's names are seed 003's tools under another name (as in TypeScript)."""
    target = SEED_002_ALIASES.get(name, name)
    spec = next((s for s in SPECS if s["name"] == target), None)
    if spec is None:
        raise ValueError(f'Unknown tool "{name}" (available: {", ".join([s["name"] for s in SPECS] + list(SEED_002_ALIASES))})')
    spec = copy.deepcopy(spec)
    if name != target:
        spec.update(name=name, description=f"Seed 002's name for {target}. {spec['description']}")
    return spec


def knowhub_tool(name: str, tools: Optional[Tools] = None) -> StructuredTool:
    """One tool (``knowledge_search``, … or seed 002's ``get_knowledge`` / ``save_knowledge``) as a ``StructuredTool``.

    ``tools``: the :class:`knowhub.tools.Tools` to run it with (its client and defaults); default: one on
    ``KNOWHUB_URL`` / ``KNOWHUB_TOKEN``.
    """
    spec = _spec(name)
    bound = tools if tools is not None else Tools()

    async def arun(**arguments: Any) -> Tuple[str, Dict[str, Any]]:
        result = await bound.call_tool(name, arguments)
        if result.is_error:
            raise ToolException(result.output)
        return result.output, result.metadata

    def run(**arguments: Any) -> Tuple[str, Dict[str, Any]]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(arun(**arguments))
        # A loop runs in this thread (a notebook, sync code called from async code): run the call in another one.
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(lambda: asyncio.run(arun(**arguments))).result()

    return StructuredTool(
        name=spec["name"],
        description=spec["description"],
        args_schema=spec["parameters"],
        func=run,
        coroutine=arun,
        response_format="content_and_artifact",
        handle_tool_error=True,  # the error text ([code] and why) goes to the model, as the MCP server's isError
    )


def knowhub_tools(tools: Optional[Tools] = None, *, names: Optional[Sequence[str]] = None, seed_002_aliases: bool = False) -> List[StructuredTool]:
    """The seed-003 tools as LangChain tools: every one of ``knowhub.tools`` (``names`` picks some), plus seed
    002's ``get_knowledge`` and ``save_knowledge`` with ``seed_002_aliases=True``.

    >>> [t.name for t in knowhub_tools(names=["knowledge_search", "knowledge_save"])]  # doctest: +SKIP
    ['knowledge_search', 'knowledge_save']
    """
    bound = tools if tools is not None else Tools()
    chosen = list(names) if names is not None else [s["name"] for s in SPECS] + (list(SEED_002_ALIASES) if seed_002_aliases else [])
    return [knowhub_tool(name, bound) for name in chosen]


def _document(result: Dict[str, Any]) -> Document:
    """A search result as a ``Document``: the content, and the entry's fields as metadata."""
    evaluation = result.get("eval") or {}
    metadata = {
        "id": result["id"],
        "task": result["task"],
        "types": result["types"],
        "tags": result["tags"],
        "scopes": result["scopes"],
        "resource_ids": result["resource_ids"],
        "score": evaluation.get("score"),
        "helpful": evaluation.get("helpful"),
        "harmful": evaluation.get("harmful"),
        "confidence": evaluation.get("confidence"),
        "quality_score": result.get("quality_score"),
        "relevance": (result.get("explain") or {}).get("relevance"),
    }
    return Document(page_content=result["content"], metadata=metadata, id=result["id"])


class KnowHubRetriever(BaseRetriever):
    """KnowHub's search (``knowledge_search``: hybrid retrieval, quality rerank, scopes of the token) as a
    LangChain retriever. Each ``Document`` is an entry: ``page_content`` its content, ``metadata`` its
    ``id``, ``task``, ``types``, ``tags``, ``scopes``, ``resource_ids``, ``score`` (1-5), ``helpful``,
    ``harmful``, ``confidence``, ``quality_score`` and ``relevance`` (1 for the best result).

    The content is returned as stored: put it into a prompt wrapped as data (``knowhub.wrap_entries``),
    as the tools do, so that a model never takes it for instructions.

    >>> retriever = KnowHubRetriever(top_k=3)  # KNOWHUB_URL / KNOWHUB_TOKEN  # doctest: +SKIP
    >>> retriever.invoke("selenium login blocked")[0].metadata["id"]  # doctest: +SKIP
    """

    client: Optional[KnowHub] = None
    url: Optional[str] = None
    token: Optional[str] = None
    top_k: int = 5
    min_score: int = 3
    types: Optional[List[str]] = None
    tags: Optional[Dict[str, str]] = None
    order: Optional[str] = None

    model_config = {"arbitrary_types_allowed": True}

    def _client(self) -> KnowHub:
        if self.client is None:
            self.client = KnowHub(self.url, self.token)
        return self.client

    def _search(self, query: str) -> List[Document]:
        found = self._client().search(query, self.top_k, self.min_score, self.types, explain=True, order=self.order, tags=self.tags)
        return [_document(r) for r in found["results"]]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> List[Document]:
        return self._search(query)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun) -> List[Document]:
        return await asyncio.to_thread(self._search, query)


__all__ = ["KnowHubRetriever", "knowhub_tool", "knowhub_tools"]
