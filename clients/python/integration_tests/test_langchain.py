"""The LangChain integration against a real server: the seed-003 tools as StructuredTools (the one
schema of every KnowHub tool), a LangChain agent (langchain's create_agent, driven by langchain-core's
fake chat model with scripted tool calls) that saves and then finds knowledge through KnowHub, and the
retriever over knowledge_search."""

import asyncio
import json
import unittest
import uuid
from typing import Any, List

from hub import hub, server

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from knowhub import AsyncKnowHub, KnowHub
from knowhub.integrations.langchain import KnowHubRetriever, knowhub_tools
from knowhub.tools import Tools, openai_tools


class ScriptedModel(FakeMessagesListChatModel):
    """langchain-core's fake chat model, answering the scripted messages in turn; bind_tools keeps what
    the agent bound (as OpenAI tools, the form a real model's integration sends)."""

    bound: List[Any] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        self.bound = [convert_to_openai_tool(t) for t in tools]
        return self


def call(name: str, args: dict, call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


class LangChainToolsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.url = hub()["url"]
        # Seed 003's knowledge_save owns what it saves as agent:research_agent: the token is that agent's.
        cls.token = json.loads(server().cli("token", "create", "--agent", "research_agent", "--org", "acme", "--perm", "read,write", "--json"))["token"]
        cls.tools = knowhub_tools(Tools(AsyncKnowHub(cls.url, cls.token)))

    def test_the_tools_are_the_seed_tools_with_their_one_schema(self) -> None:
        self.assertEqual([convert_to_openai_tool(t) for t in self.tools], openai_tools())
        names = [t.name for t in self.tools]
        self.assertEqual(names[:6], ["knowledge_search", "knowledge_save", "knowledge_update", "knowledge_batch_update", "knowledge_list", "knowledge_slim"])
        self.assertIn("resource_save", names)
        self.assertIn("goal", names)
        aliases = knowhub_tools(Tools(AsyncKnowHub(self.url, self.token)), names=["get_knowledge", "save_knowledge"])
        schemas = [convert_to_openai_tool(t)["function"] for t in aliases]
        self.assertEqual([s["name"] for s in schemas], ["get_knowledge", "save_knowledge"])
        self.assertEqual(schemas[0]["parameters"], openai_tools()[0]["function"]["parameters"])
        self.assertTrue(schemas[1]["description"].startswith("Seed 002's name for knowledge_save. "))
        with self.assertRaises(ValueError):
            knowhub_tools(names=["knowledge_delete_everything"])

    def test_an_agent_saves_then_finds_knowledge_through_knowhub(self) -> None:
        tag = uuid.uuid4().hex[:8]
        task = f"Deploy the billing service {tag} with zero downtime"
        model = ScriptedModel(
            responses=[
                call("knowledge_save", {"task": task, "content": "Drain the old pods before switching the load balancer.", "types": ["strategy"], "score": 4}, "c1"),
                call("knowledge_search", {"query": f"billing service {tag} zero downtime deploy", "top_k": 3}, "c2"),
                call("knowledge_update", {"knowledge_id": "knowledge-20200101000000-none", "update_score": 5}, "c3"),
                AIMessage(content="Saved and found it."),
            ]
        )
        agent = create_agent(model, self.tools)
        state = agent.invoke({"messages": [HumanMessage(content="Remember how to deploy billing, then look it up.")]})
        self.assertEqual([t["function"]["name"] for t in model.bound], [t.name for t in self.tools])
        replies = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        self.assertEqual([m.name for m in replies], ["knowledge_save", "knowledge_search", "knowledge_update"])
        saved, found, failed = replies
        entry_id = saved.artifact["id"]
        self.assertTrue(saved.content.startswith(f"Saved {entry_id} (types strategy; scopes org:acme; owner agent:research_agent; score 4)"))
        self.assertIn(entry_id, [i["id"] for i in found.artifact["items"]])
        self.assertIn("<knowledge_entries", found.content)  # the model reads it wrapped as data
        self.assertEqual((failed.status, failed.content.split(":")[0]), ("error", "error [not_found]"))
        self.assertEqual(state["messages"][-1].content, "Saved and found it.")
        # What the agent saved is in KnowHub, and KnowHub's own tool text for the search is the same.
        self.assertEqual(KnowHub(self.url, self.token).get(entry_id)["task"], task)
        self.assertEqual(found.content, server().mcp_call("knowledge_search", {"query": f"billing service {tag} zero downtime deploy", "top_k": 3}, self.token)["content"][0]["text"])

    def test_the_tools_run_sync_and_async(self) -> None:
        tool = next(t for t in self.tools if t.name == "knowledge_list")
        self.assertIn("knowledge_entries", tool.invoke({"limit": 2}))
        self.assertIn("knowledge_entries", asyncio.run(tool.ainvoke({"limit": 2})))
        bad = tool.invoke({"limit": 0})  # the server's validation error, as text for the model
        self.assertTrue(bad.startswith("error [validation_error]"))

    def test_a_sync_call_works_inside_a_running_event_loop(self) -> None:
        """A notebook, or sync code called from async code: ``invoke`` with an event loop running in this thread."""
        tool = next(t for t in self.tools if t.name == "knowledge_list")

        async def inside() -> Any:
            return tool.invoke({"limit": 2})

        answer = asyncio.run(inside())
        self.assertFalse(answer.startswith("error"), answer)
        self.assertEqual(answer, asyncio.run(tool.ainvoke({"limit": 2})))


class KnowHubRetrieverTest(unittest.TestCase):
    def setUp(self) -> None:
        self.url, self.alice, self.eve = hub()["url"], hub()["alice"], hub()["eve"]
        self.tag = uuid.uuid4().hex[:8]
        self.entry = KnowHub(self.url, self.alice).save(
            f"Rotate the {self.tag} database credentials", "Keep both credentials valid during the switch.", ["strategy"], tags={"area": "ops"}, score=4
        )

    def test_documents_are_entries_with_their_metadata(self) -> None:
        retriever = KnowHubRetriever(client=KnowHub(self.url, self.alice), top_k=3)
        docs = retriever.invoke(f"rotate {self.tag} database credentials")
        self.assertEqual(docs[0].id, self.entry["id"])
        self.assertEqual(docs[0].page_content, "Keep both credentials valid during the switch.")
        meta = docs[0].metadata
        self.assertEqual((meta["id"], meta["types"], meta["tags"], meta["score"], meta["scopes"]), (self.entry["id"], ["strategy"], {"area": "ops"}, 4, ["user:alice"]))
        self.assertEqual(meta["relevance"], 1)
        docs = asyncio.run(KnowHubRetriever(url=self.url, token=self.alice, tags={"area": "nothing"}).ainvoke(f"rotate {self.tag} database credentials"))
        self.assertEqual(docs, [])

    def test_another_orgs_token_retrieves_none_of_it(self) -> None:
        self.assertEqual(KnowHubRetriever(url=self.url, token=self.eve).invoke(f"rotate {self.tag} database credentials"), [])


if __name__ == "__main__":
    unittest.main()
