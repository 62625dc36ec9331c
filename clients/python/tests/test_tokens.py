"""Token mode on a server of its own: no token → unauthenticated, a read-only token → forbidden on
save, the admin calls, and the tools' error text equal to the TypeScript tools' (MCP) for the same failure."""

import asyncio
import json
import unittest

from support import Server

from knowhub import AsyncKnowHub, KnowHub, KnowHubError
from knowhub.tools import Tools


class TokenModeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server()
        # The CLI beside the server (the lock file's local key): the first token switches it to token mode.
        # An org admin (its reach ends at its org: status counts, its org's tokens).
        cls.admin_token = json.loads(cls.server.cli("token", "create", "--user", "admin", "--org", "acme", "--perm", "read,write,admin", "--json"))["token"]
        cls.reader_token = json.loads(cls.server.cli("token", "create", "--user", "reader", "--perm", "read", "--json"))["token"]

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_no_token_is_unauthenticated(self) -> None:
        with self.assertRaises(KnowHubError) as caught:
            KnowHub(self.server.url, token="").search("anything")
        self.assertEqual((caught.exception.code, caught.exception.status), ("unauthenticated", 401))
        with self.assertRaises(KnowHubError) as caught:
            KnowHub(self.server.url, token="kh_wrong_token_0000000000000000").list()
        self.assertEqual(caught.exception.code, "unauthenticated")
        # The public meta routes need none.
        self.assertEqual(KnowHub(self.server.url, token="").healthz()["status"], "ok")

    def test_read_only_token_is_forbidden_to_save(self) -> None:
        reader = KnowHub(self.server.url, self.reader_token)
        self.assertEqual(reader.search("anything")["count"], 0)
        with self.assertRaises(KnowHubError) as caught:
            reader.save("Rotate API keys", "Every 90 days.", ["strategy"])
        self.assertEqual((caught.exception.code, caught.exception.status), ("forbidden", 403))
        with self.assertRaises(KnowHubError) as caught:
            reader.status()
        self.assertEqual(caught.exception.code, "forbidden")

    def test_the_tools_answer_like_the_typescript_tools(self) -> None:
        tools = Tools(AsyncKnowHub(self.server.url, self.reader_token))
        args = {"task": "Rotate API keys", "content": "Every 90 days.", "types": ["strategy"]}
        result = asyncio.run(tools.knowledge_save(**args))
        self.assertTrue(result.is_error)
        self.assertEqual(result.metadata["error"]["code"], "forbidden")
        self.assertEqual(len(result), 0)
        mcp = self.server.mcp_call("knowledge_save", args, token=self.reader_token)
        self.assertTrue(mcp["isError"])
        self.assertEqual(result.output, mcp["content"][0]["text"])
        self.assertTrue(result.output.startswith("error [forbidden]: "))

    def test_knowledge_save_refuses_an_agent_the_token_is_not(self) -> None:
        # Seed 003's default owner is agent:{agent_id}; a token that is not that agent gets a clear error, never another owner.
        admin = Tools(AsyncKnowHub(self.server.url, self.admin_token))
        args = {"task": "Not mine", "content": "x", "types": ["tool"], "agent_id": "crawler_ops"}
        refused = asyncio.run(admin.knowledge_save(**args))
        self.assertTrue(refused.is_error)
        self.assertIn("knowhub token create --agent crawler_ops --org acme", refused.output)
        theirs = self.server.mcp_call("knowledge_save", args, token=self.admin_token)
        self.assertEqual(refused.output, theirs["content"][0]["text"])
        # An owner given (one of its ids): no agent assumed; the scope is still the caller's org (seed 003).
        own = asyncio.run(admin.knowledge_save("Mine", "x", ["tool"], agent_id="", owner="user:admin"))
        self.assertEqual((own.metadata["scopes"], own.metadata["owner"]), (["org:acme"], "user:admin"))

    def test_admin_tokens(self) -> None:
        admin = KnowHub(self.server.url, self.admin_token)
        self.assertIn("entries", admin.status())
        created = admin.token_create(user="writer@acme", org="acme", permissions=["read", "write"], name="python-test")
        writer = KnowHub(self.server.url, created["token"])
        entry = writer.save("Rotate API keys", "Every 90 days.", ["strategy"])
        self.assertEqual(entry["owner"], "user:writer@acme")
        self.assertIn(created["id"], [t["id"] for t in admin.token_list()])
        self.assertTrue(all("token" not in t for t in admin.token_list()))
        admin.token_revoke(created["id"])
        with self.assertRaises(KnowHubError) as caught:
            writer.get(entry["id"])
        self.assertEqual(caught.exception.code, "unauthenticated")


if __name__ == "__main__":
    unittest.main()
