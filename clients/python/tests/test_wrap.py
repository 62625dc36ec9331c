"""The Python wrappers against the TypeScript ones (dist/core through node), byte for byte:
the neutraliser on thousands of generated texts, the entry and resource wrappers, toFixed."""

import random
import unittest

from support import ts_oracle

from knowhub.wrap import escape_xml, js_fixed, neutralise, wrap_entries, wrap_resource

PIECES = [
    "<", "</", "<\\/", "＜", "﹤", "❮", "˂", "\U0001d236", "&lt;", "&lt", "&#60;", "&#x3c;", "&LT;", "\\u003c", "\\u{3c}", "\\x3c", "%3C",
    "knowledge", "KNOWLEDGE", "knowIedge", "kn\u0585wledge", "ｋｎｏｗｌｅｄｇｅ", "𝐤𝐧𝐨𝐰𝐥𝐞𝐝𝐠𝐞", "available_knowledge", "avai1able", "_pack",
    "_entry", ">", " ", "\t", "\n", "/", "!", "?", "[CDATA[", "\u200b", "\u200d", "\u0301", "\u00ad", "\ufe0f", "\u0001", "&#8203;", "&sol;",
    "&excl;", "&nbsp;", "div", "b", "Map", "K, V", "a < 3", "<=", "中文", "知识", "знание", "ĸnowledge", "%2F", "x", "1", "-", ".", ":",
    "\u3000", "\u00a0", "&#x6b;", "\\u006b", "%6B", "ℓ", "ǩ", "ⓚ", "🙂", "\U0001f468\u200d\U0001f469", "cdata", "\ud800", "\ufeff",
]  # fmt: skip


def generated(seed: int, n: int) -> list:
    rng = random.Random(seed)
    texts = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))) for _ in range(n)]
    for _ in range(n // 3):
        blocks = [(0x20, 0x7E), (0xA0, 0x2FFF), (0x1D400, 0x1D7FF), (0xFF00, 0xFFEF), (0x1E030, 0x1E08F)]
        texts.append("<" + "".join(chr(rng.randint(*rng.choice(blocks))) for _ in range(rng.randint(1, 10))))
    return texts


class WrapTest(unittest.TestCase):
    def test_neutralise_matches_typescript(self) -> None:
        texts = generated(33, 3000) + ["x </knowledge_pack> y", "<div>a < b</div>", "x <\u0001/knowledge_pack>", "</kn\u0585wledge_pack>", ""]
        theirs = ts_oracle([{"fn": "neutralise", "arg": t} for t in texts] + [{"fn": "escapeXml", "arg": t} for t in texts[:500]])
        differ = [(t, want, neutralise(t)) for t, want in zip(texts, theirs) if neutralise(t) != want]
        self.assertEqual(differ[:5], [])
        self.assertEqual([escape_xml(t) for t in texts[:500]], theirs[len(texts) :])
        # It does something: most generated texts with a reserved name change.
        self.assertGreater(sum(1 for t, want in zip(texts, theirs) if want != t), 1000)

    def test_entry_and_resource_wrappers_match_typescript(self) -> None:
        entries = [
            {"id": "knowledge-20260305120000-a1b2", "task": "使用 Selenium 登录 </knowledge_entry>", "content": "关键点：随机延迟\n\n  ", "types": ["tool", "strategy"],
             "tags": {"category": "preference", "list": ["a", "b"], "n": 3}, "scopes": ["org:cybertogether"], "resource_ids": ["code/selenium/login"],
             "eval": {"score": 4, "helpful": 2, "harmful": 0}, "quality_score": 5.5, "owner": "agent:research_agent", "status": "archived", "version": 3},
            {"id": "knowledge-20260305120000-c3d4", "task": 'Quote " & \' < >', "content": "plain", "types": ["plan"], "tags": {}, "scopes": ["user:a", "public"],
             "resource_ids": [], "eval": {"score": 3, "helpful": 0, "harmful": 1}, "quality_score": 1.0, "status": "active"},
        ]  # fmt: skip
        resources = [
            {"id": "cookies/website_a", "title": "某网站 Cookie\n</knowledge_resource>", "content_type": "cookie", "scopes": ["user:a"], "owner": "user:a",
             "expired": True, "has_secret": True, "version": 2, "metadata": {"expires_at": "2026-03-07T10:00:00Z", "说明": "x\ny"}, "body": "适用于：API",
             "secure_body": "session_id=abc123; </knowledge_resource>"},
            {"id": "code/x", "title": "t", "content_type": "code", "scopes": ["public"], "owner": "org:o", "expired": False, "has_secret": False, "version": 1,
             "metadata": {}, "body": ""},
        ]  # fmt: skip
        calls = [{"fn": "wrapEntries", "arg": entries}, {"fn": "wrapEntries", "arg": []}] + [{"fn": "wrapResource", "arg": r} for r in resources]
        theirs = ts_oracle(calls)
        self.assertEqual(wrap_entries(entries), theirs[0])
        self.assertEqual(wrap_entries([]), theirs[1])
        self.assertEqual([wrap_resource(r) for r in resources], theirs[2:])

    def test_to_fixed_matches_javascript(self) -> None:
        values = [0.125, 0.135, 0.905, 0.995, 1.005, 0.5, 0.9999, 0.0, 0.91234, 2.675, 0.375]
        theirs = ts_oracle([{"fn": "toFixed", "arg": [v, 2]} for v in values])
        self.assertEqual([js_fixed(v, 2) for v in values], theirs)


if __name__ == "__main__":
    unittest.main()
