"""AsyncKnowHub gives the same answers as KnowHub, and many calls run at once."""

import asyncio
import time
import unittest
import uuid

from support import shared

from knowhub import AsyncKnowHub, KnowHub, KnowHubError


class AsyncClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = shared()
        cls.kh = KnowHub(cls.server.url)

    def test_same_answers_as_the_sync_client(self) -> None:
        tag = uuid.uuid4().hex[:8]
        entry = self.kh.save(f"Compress images before upload {tag}", "Use WebP at quality 80; 图片压缩后再上传。", ["tool"], score=4)
        rid = f"code/images/compress_{tag}"
        self.kh.resource_save(rid, "Compress with Pillow", "img.save(out, 'WEBP', quality=80)", content_type="code")
        trace = f"trace-{tag}"
        self.kh.goal_create(trace, f"Compress images {tag}")

        async def answers() -> list:
            async with AsyncKnowHub(self.server.url) as kh:
                return list(
                    await asyncio.gather(
                        kh.search(f"compress images webp {tag}"),
                        kh.get(entry["id"]),
                        kh.list(limit=5),
                        kh.resource_get(rid),
                        kh.resource_list(prefix="code/images/"),
                        kh.versions(entry["id"]),
                        kh.goal_show(trace),
                        kh.healthz(),
                    )
                )

        got = asyncio.run(answers())
        want = [
            self.kh.search(f"compress images webp {tag}"),
            self.kh.get(entry["id"]),
            self.kh.list(limit=5),
            self.kh.resource_get(rid),
            self.kh.resource_list(prefix="code/images/"),
            self.kh.versions(entry["id"]),
            self.kh.goal_show(trace),
            self.kh.healthz(),
        ]
        self.assertEqual(got, want)
        self.assertIn(entry["id"], [r["id"] for r in got[0]["results"]])

    def test_writes_errors_and_iteration(self) -> None:
        async def scenario() -> None:
            kh = AsyncKnowHub(self.server.url)
            entry = await kh.save(f"Async save {uuid.uuid4().hex[:6]}", "异步保存。", ["definition"])
            updated = await kh.update(entry["id"], add_helpful_case={"task": "async", "outcome": "worked"})
            self.assertEqual(updated["eval"]["helpful"], 1)
            self.assertEqual((await kh.batch_update([{"knowledge_id": entry["id"], "is_helpful": True}]))["updated"], 1)
            with self.assertRaises(KnowHubError) as caught:
                await kh.get("knowledge-20200101000000-none")
            self.assertEqual(caught.exception.code, "not_found")
            seen = [e["id"] async for e in kh.list_all(limit=2)]
            self.assertIn(entry["id"], seen)
            self.assertIsInstance(await kh.export_jsonl(), str)

        asyncio.run(scenario())

    def test_calls_do_not_block_the_event_loop(self) -> None:
        async def scenario() -> float:
            kh = AsyncKnowHub(self.server.url)
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.001)
                    ticks += 1

            task = asyncio.ensure_future(ticker())
            started = time.perf_counter()
            await asyncio.gather(*(kh.search(f"query {i}") for i in range(20)))
            task.cancel()
            self.assertGreater(ticks, 0)
            return time.perf_counter() - started

        self.assertLess(asyncio.run(scenario()), 30)


if __name__ == "__main__":
    unittest.main()
