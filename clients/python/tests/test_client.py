"""KnowHub (sync) against a real `knowhub start`: every method, its answers and its errors."""

import os
import unittest
import uuid

from support import shared, shared_stub

from knowhub import KnowHub, KnowHubError


def unique(text: str) -> str:
    return f"{text} {uuid.uuid4().hex[:8]}"


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = shared()
        cls.kh = KnowHub(cls.server.url, timeout=30)

    def test_healthz_and_openapi(self) -> None:
        self.assertEqual(self.kh.healthz()["status"], "ok")
        paths = self.kh.openapi()["paths"]
        for path in ("/api/knowledge/search", "/api/knowledge", "/api/knowledge/batch_update", "/api/knowledge/slim", "/api/goals"):
            self.assertIn(path, paths)

    def test_save_then_search_finds_it(self) -> None:
        task = unique("Bust the CDN cache after a deploy")
        entry = self.kh.save(task, "Purge by surrogate key, never the whole zone.", ["strategy"], tags={"domain": "cdn"}, score=4)
        self.assertTrue(entry["id"].startswith("knowledge-"))
        self.assertEqual((entry["task"], entry["types"], entry["eval"]["score"], entry["tags"]), (task, ["strategy"], 4, {"domain": "cdn"}))
        found = self.kh.search("purge CDN cache surrogate key")
        self.assertEqual(found["count"], len(found["results"]))
        self.assertIn(entry["id"], [r["id"] for r in found["results"]])
        hit = next(r for r in found["results"] if r["id"] == entry["id"])
        self.assertEqual(hit["quality_score"], 4)
        # types filter and min_score: a 4 is left out at min_score 5, and a strategy is not a tool.
        self.assertNotIn(entry["id"], [r["id"] for r in self.kh.search("purge CDN cache surrogate key", min_score=5)["results"]])
        self.assertNotIn(entry["id"], [r["id"] for r in self.kh.search("purge CDN cache surrogate key", types=["tool"])["results"]])
        self.assertEqual(self.kh.get(entry["id"])["content"], "Purge by surrogate key, never the whole zone.")

    def test_seed_records_load_as_written(self) -> None:
        # Seed 002's profile_001, in the local principal's scopes: type, visibility and a partial eval as the seed writes them.
        user = self.kh.save(unique("whose scope"), "x", ["tool"])["owner"]
        record = {
            "id": unique("profile").replace(" ", "_"),
            "type": "user_profile",
            "task": "用户编码风格偏好",
            "tags": {"category": "preference", "domain": "coding_style"},
            "scopes": [user],
            "owner": user,
            "visibility": "private",
            "content": "用户偏好使用 TypeScript 而非 JavaScript,注重类型安全",
            "source": {"agent_id": "general_assistant", "trace_id": "trace-xxx", "timestamp": "2026-03-03"},
            "eval": {"helpful": 5, "harmful": 0, "confidence": 0.9},
        }
        saved = self.kh.save(**record)
        self.assertEqual((saved["id"], saved["types"], saved["visibility"], saved["eval"]["confidence"]), (record["id"], ["user_profile"], "private", 0.9))
        self.assertEqual(saved["ignored"], ["eval.helpful", "eval.harmful"])
        self.assertTrue(self.kh.save(**record)["existed"])
        with self.assertRaises(KnowHubError) as caught:
            self.kh.save(**{**record, "id": unique("profile").replace(" ", "_"), "visibility": "org"})
        self.assertIn('make it "private"', str(caught.exception))
        self.assertIn(record["id"], [e["id"] for e in self.kh.list(100, visibility=["private"])["items"]])
        # Filters by tag (every pair must hold), on list and search.
        self.assertIn(record["id"], [e["id"] for e in self.kh.list(100, tags={"category": "preference", "domain": "coding_style"})["items"]])
        self.assertNotIn(record["id"], [e["id"] for e in self.kh.list(100, tags={"domain": "other"})["items"]])
        hits = self.kh.search("用户编码风格偏好", min_score=0, tags={"domain": "coding_style"})["results"]
        self.assertIn(record["id"], [r["id"] for r in hits])

    def test_feedback_counts(self) -> None:
        entry = self.kh.save(unique("Retry flaky uploads"), "Retry with exponential backoff, three times.", ["strategy"])
        self.kh.update(entry["id"], add_helpful_case={"task": "upload logs", "outcome": "worked"})
        self.kh.update(entry["id"], add_helpful_case={"task": "upload images", "outcome": "worked"})
        after = self.kh.update(entry["id"], add_harmful_case={"task": "upload video", "outcome": "timed out", "reason": "too big"})
        self.assertEqual((after["eval"]["helpful"], after["eval"]["harmful"]), (2, 1))
        self.assertEqual([c["task"] for c in after["eval"]["helpful_history"]], ["upload logs", "upload images"])
        self.assertEqual(self.kh.update(entry["id"], update_score=5)["eval"]["score"], 5)
        batch = self.kh.batch_update(
            [
                {"knowledge_id": entry["id"], "is_helpful": True, "case": {"task": "upload backups", "outcome": "worked"}},
                {"knowledge_id": "knowledge-20200101000000-zzzz", "is_helpful": False},
            ]
        )
        self.assertEqual(batch["updated"], 1)
        self.assertEqual([r["ok"] for r in batch["results"]], [True, False])
        self.assertEqual(batch["results"][1]["error"]["code"], "not_found")
        self.assertEqual(self.kh.get(entry["id"])["eval"]["helpful"], 3)

    def test_evolve_rewrites_and_keeps_the_old_version(self) -> None:
        entry = self.kh.save(unique("Log in to site A"), "Use undetected_chromedriver.", ["tool"])
        # The rewrite may only say what the entry and the feedback say (issue 43).
        evolved = self.kh.update(entry["id"], evolve_feedback="Say to wait 2-5 s between requests.")
        self.assertEqual(evolved["content"], "Use undetected_chromedriver and wait 2-5 s between requests.")
        versions = self.kh.versions(entry["id"])["versions"]
        self.assertEqual(versions[-1]["content"], "Use undetected_chromedriver.")

    def test_not_found_is_a_coded_error(self) -> None:
        with self.assertRaises(KnowHubError) as caught:
            self.kh.get("knowledge-20200101000000-none")
        error = caught.exception
        self.assertEqual((error.code, error.status, error.method), ("not_found", 404, "GET"))
        self.assertTrue(error.request_id)
        self.assertIn("knowledge-20200101000000-none", error.message)
        with self.assertRaises(KnowHubError) as caught:
            self.kh.resource_get("no/such/resource")
        self.assertEqual(caught.exception.code, "not_found")

    def test_validation_errors_carry_every_issue(self) -> None:
        with self.assertRaises(KnowHubError) as caught:
            self.kh.save("", "x", ["nope"])
        error = caught.exception
        self.assertEqual((error.code, error.status), ("validation_error", 400))
        self.assertEqual(sorted(i["path"] for i in error.issues), ["task", "types.0"])
        # Refused before sending: ids the server would refuse (URL parsing would resolve the ..).
        with self.assertRaises(KnowHubError) as caught:
            self.kh.resource_get("code/../secrets")
        self.assertEqual((caught.exception.code, caught.exception.status), ("validation_error", None))
        with self.assertRaises(KnowHubError) as caught:
            self.kh.get("..")
        self.assertEqual(caught.exception.code, "validation_error")

    def test_network_errors(self) -> None:
        with self.assertRaises(KnowHubError) as caught:
            KnowHub("http://127.0.0.1:9", retries=0, timeout=5).healthz()
        self.assertEqual((caught.exception.code, caught.exception.status), ("network_error", None))

    def test_chinese_round_trips_unchanged(self) -> None:
        task = unique("使用 Selenium 登录某网站并绕过反爬检测")
        content = "使用 undetected_chromedriver 可以绕过大部分检测。关键点：1) 设置合适的 user-agent 2) 随机延迟 3) 避免频繁请求"
        entry = self.kh.save(task, content, ["tool", "strategy"], tags={"领域": "爬虫"}, source={"name": "资源名称", "urls": ["https://例子.cn/页"]})
        got = self.kh.get(entry["id"])
        self.assertEqual((got["task"], got["content"], got["tags"], got["source"]["name"]), (task, content, {"领域": "爬虫"}, "资源名称"))
        self.assertEqual(got["source"]["urls"], ["https://例子.cn/页"])
        self.assertIn(entry["id"], [r["id"] for r in self.kh.search("绕过反爬检测 登录")["results"]])
        resource = self.kh.resource_save(f"cookies/site_cn_{uuid.uuid4().hex[:6]}", "某网站 Cookie", "适用于：已登录状态的 API 调用", content_type="cookie")
        self.assertEqual(self.kh.resource_get(resource["id"])["body"], "适用于：已登录状态的 API 调用")

    def test_list_pages_and_lifecycle(self) -> None:
        tag = uuid.uuid4().hex[:8]
        ids = [self.kh.save(f"Plan release {tag} step {i}", f"Step {i} of the release plan {tag}.", ["plan"])["id"] for i in range(3)]
        page = self.kh.list(limit=2, types=["plan"])
        self.assertEqual((page["count"], len(page["items"])), (2, 2))
        self.assertTrue(page["next_cursor"])
        self.assertEqual([e["id"] for e in page["items"]], ids[::-1][:2])  # newest first
        every = [e["id"] for e in self.kh.list_all(limit=1, types=["plan"])]
        self.assertTrue(set(ids) <= set(every))
        self.assertEqual(len(every), len(set(every)))

        edited = self.kh.edit(ids[0], content=f"Step 0, revised {tag}.", reason="typo")
        self.assertEqual((edited["content"], edited["version"]), (f"Step 0, revised {tag}.", 2))
        self.assertEqual(self.kh.versions(ids[0])["versions"][0]["content"], f"Step 0 of the release plan {tag}.")
        self.assertEqual(self.kh.archive(ids[0])["status"], "archived")
        self.assertNotIn(ids[0], [e["id"] for e in self.kh.list(limit=100, types=["plan"])["items"]])
        self.assertIn(ids[0], [e["id"] for e in self.kh.list(limit=100, types=["plan"], status=["archived"])["items"]])
        self.assertEqual(self.kh.restore(ids[0])["status"], "active")
        self.assertEqual(self.kh.delete(ids[1]), {"id": ids[1], "deleted": True})
        with self.assertRaises(KnowHubError) as caught:
            self.kh.get(ids[1])
        self.assertEqual(caught.exception.code, "not_found")

    def test_slim_merges_and_unmerge_restores(self) -> None:
        text = f"Rotate API keys every 90 days and revoke the old key {uuid.uuid4().hex[:6]}."
        a = self.kh.save("Rotate API keys", text, ["strategy"])
        b = self.kh.save("Rotate API keys", text, ["strategy"])
        plan = self.kh.slim(dry_run=True)
        self.assertTrue(plan["dry_run"])
        group = next(g for g in plan["groups"] if set(g["merged_ids"]) == {a["id"], b["id"]})
        self.assertGreaterEqual(group["similarity"], 0.9)
        self.assertEqual(self.kh.get(a["id"])["status"], "active")  # a plan changes nothing
        done = self.kh.slim("google/gemini-2.0-flash-001")
        merged = next(g for g in done["groups"] if set(g["merged_ids"]) == {a["id"], b["id"]})
        self.assertEqual(self.kh.get(a["id"])["status"], "merged")
        undone = self.kh.unmerge(merged["kept_id"])
        self.assertEqual(sorted(undone["restored_ids"]), sorted([a["id"], b["id"]]))
        self.assertEqual(self.kh.get(b["id"])["status"], "active")

    def test_extract_with_the_servers_llm(self) -> None:
        messages = [{"id": "m1", "role": "user", "content": "Install with pnpm here, the lock file is pnpm-lock.yaml"}]
        proposed = self.kh.extract(messages)
        self.assertEqual(proposed["mode"], "propose")
        self.assertEqual([(i["action"], i["task"]) for i in proposed["items"]], [("add", "Install dependencies in this repository")])
        saved = self.kh.extract(messages, mode="save", context={"trace_id": "trace-py-1"})
        entry = self.kh.get(saved["items"][0]["id"])
        self.assertEqual((entry["content"], entry["source"]["trace_id"]), ("Use pnpm, not npm: the lock file is pnpm-lock.yaml.", "trace-py-1"))
        self.assertTrue(any("pnpm" in str(r.get("messages")) for r in shared_stub().requests))

    def test_export_and_import(self) -> None:
        entry = self.kh.save(unique("Export me"), "Exported content.", ["definition"])
        jsonl = self.kh.export_jsonl()
        lines = [line for line in jsonl.splitlines() if entry["id"] in line]
        self.assertEqual(len(lines), 1)
        report = self.kh.import_jsonl(lines[0] + "\n", on_conflict="skip")
        self.assertEqual((report["imported"], report["skipped"]), (0, 1))
        fresh = self.kh.import_jsonl('{"task": "Imported task", "content": "Imported content.", "types": ["definition"]}\n')
        self.assertEqual(fresh["imported"], 1)

    def test_resources_and_their_secret(self) -> None:
        rid = f"credentials/site_{uuid.uuid4().hex[:6]}"
        saved = self.kh.resource_save(rid, "Site A account", "Log in directly; 100 a day", "user@example.com / SecurePass123", "credential")
        self.assertEqual((saved["id"], saved["has_secret"], saved["content_type"]), (rid, True, "credential"))
        self.assertNotIn("secure_body", self.kh.resource_get(rid))  # only when asked
        self.assertEqual(self.kh.resource_get(rid, include_secret=True)["secure_body"], "user@example.com / SecurePass123")
        updated = self.kh.resource_update(rid, title="Site A test account", secure_body=None)
        self.assertEqual((updated["title"], updated["has_secret"]), ("Site A test account", False))
        self.assertNotIn("secure_body", self.kh.resource_get(rid, include_secret=True))
        listed = self.kh.resource_list(prefix="credentials/", content_type=["credential"])
        self.assertIn(rid, [r["id"] for r in listed["items"]])
        self.assertTrue(all("body" not in r and "secure_body" not in r for r in listed["items"]))
        entry = self.kh.save("Log in to site A", "Use the test account.", ["tool"], resource_ids=[rid])
        expanded = self.kh.get(entry["id"], expand="resources")
        self.assertEqual([r["id"] for r in expanded["resources"]], [rid])
        deleted = self.kh.resource_delete(rid)
        self.assertEqual((deleted["id"], deleted["deleted"]), (rid, True))

    def test_agent_context_and_goals(self) -> None:
        # A server keeps remote agents per org in its store (never its own home): store the agent first.
        stored = self.kh.agent_document_write("deployer", "knowledge.md", "## @deploy: ship a release\nContract: run the checks first.\n")
        self.assertEqual((stored["agent"], stored["name"]), ("deployer", "knowledge.md"))
        self.assertIn("@deploy", self.kh.agent_document("deployer", "knowledge.md")["content"])
        context = self.kh.agent_context("deployer", task="Ship release 1.2")
        self.assertEqual(context["messages"][0]["role"], "system")
        self.assertIn("@deploy: ship a release", context["messages"][0]["content"])
        task = unique("Rotate database credentials without downtime")
        entry = self.kh.save(task, "Keep both credentials valid during the switch.", ["strategy"], score=4)
        trace = f"trace-{uuid.uuid4().hex[:8]}"
        created = self.kh.goal_create(trace, task)
        self.assertEqual([g["goal_id"] for g in created["goals"]], ["1"])
        focused = self.kh.goal_focus(trace, "1")
        self.assertEqual(focused["focused"], "1")
        self.assertIn(entry["id"], [k["id"] for k in focused["knowledge"]])
        self.assertIn("📚 Related knowledge", focused["text"])
        self.assertIn("<knowledge_entries", focused["text"])
        child = self.kh.goal_create(trace, "Write the runbook", parent_id="1")
        self.assertEqual([g["goal_id"] for g in child["goals"]], ["1", "1.1"])
        self.assertEqual(next(g for g in self.kh.goal_abandon(trace, "1.1", "not needed")["goals"] if g["goal_id"] == "1.1")["status"], "abandoned")
        self.assertEqual(self.kh.goal_complete(trace, "1", "rotated")["goals"][0]["status"], "completed")
        self.assertEqual(self.kh.goal_show(trace)["trace_id"], trace)

    def test_admin_status_reown_and_backup(self) -> None:
        status = self.kh.status()
        self.assertIn("entries", status)
        owner = self.kh.save(unique("Reown me"), "content", ["definition"])["owner"]
        plan = self.kh.reown(owner, to="user:alice", dry_run=True)
        self.assertEqual((plan["from"], plan["to"], plan["dry_run"]), (owner, "user:alice", True))
        self.assertGreaterEqual(plan["owned"], 1)
        backup = self.kh.backup()
        self.assertIsInstance(backup, bytes)
        self.assertGreater(len(backup), 1000)

    def test_user_profile_forget_and_purge(self) -> None:
        # The local principal (the hub operator here) saves a profile entry for a user and reads that user's profile.
        user = "pat-" + uuid.uuid4().hex[:6]
        entry = self.kh.save(unique("Preferred editor"), "prefers vim", ["user_profile"], tags={"category": "preference"}, scopes=["org:cybertogether"], owner=f"user:{user}")
        profile = self.kh.user_profile(user)
        self.assertEqual([e["id"] for e in profile["categories"]["preference"]], [entry["id"]])
        self.assertEqual(sorted(profile["categories"]), ["background", "constraint", "habit", "preference"])
        receipt = self.kh.forget("user:nobody-" + uuid.uuid4().hex[:6], dry_run=True)
        self.assertTrue(receipt["dry_run"])
        self.assertEqual(set(receipt["erased"].values()), {0})
        with self.assertRaises(KnowHubError) as unknown:
            self.kh.forget("user:nobody-" + uuid.uuid4().hex[:6])
        self.assertEqual(unknown.exception.code, "not_found")
        with self.assertRaises(KnowHubError) as caught:
            self.kh.forget("nobody")
        self.assertEqual(caught.exception.code, "validation_error")
        plan = self.kh.purge(archived_older_than="3650d", dry_run=True)
        self.assertEqual((plan["dry_run"], plan["erased"]["archived"]), (True, 0))

    def test_url_and_token_default_to_the_environment(self) -> None:
        saved = {k: os.environ.get(k) for k in ("KNOWHUB_URL", "KNOWHUB_TOKEN")}
        try:
            os.environ["KNOWHUB_URL"] = self.server.url
            os.environ["KNOWHUB_TOKEN"] = "kh_not_a_token"
            kh = KnowHub()
            self.assertEqual(kh.url, self.server.url)
            self.assertEqual(kh.healthz()["status"], "ok")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


if __name__ == "__main__":
    unittest.main()
