"""Issue 39: what the client is given is checked where it is given, for the sync and the async
client alike. A token is stripped (a trailing newline from a file) and refused, without being
echoed, when an HTTP header cannot carry it; a base URL that is not http(s) is refused at
construction; a redirect to another origin never carries a request body (``secure_body``
included) nor the token."""

import asyncio
import os
import unittest
from typing import Any, Callable, Dict, List
from unittest import mock

import support  # noqa: F401  (puts the package on the path)
from test_transport import OK, Scripted

from knowhub import AsyncKnowHub, KnowHub, KnowHubError

TOKEN = "kh_" + "S3cretTokenValue_" * 3


def both(make: Callable[..., Any]) -> List[Callable[..., Any]]:
    """The call made through KnowHub and through AsyncKnowHub (run to completion)."""
    return [lambda *a, **k: make(KnowHub(*a, **k)), lambda *a, **k: asyncio.run(_closing(AsyncKnowHub(*a, **k), make))]


async def _closing(kh: AsyncKnowHub, make: Callable[..., Any]) -> Any:
    async with kh:
        return await make(kh)


class TokenTest(unittest.TestCase):
    def test_a_token_with_a_trailing_newline_is_stripped(self) -> None:
        server = Scripted([OK])
        try:
            for call in both(lambda kh: kh.healthz()):
                call(server.url, TOKEN + "\n")
                call(server.url, "  " + TOKEN + "\r\n")
            self.assertEqual({r["headers"]["authorization"] for r in server.requests}, {f"Bearer {TOKEN}"})
            self.assertEqual(len(server.requests), 4)
        finally:
            server.close()

    def test_a_token_from_the_environment_is_stripped_too(self) -> None:
        server = Scripted([OK])
        try:
            with mock.patch.dict(os.environ, {"KNOWHUB_TOKEN": TOKEN + "\n"}):
                for call in both(lambda kh: kh.healthz()):
                    call(server.url)
            self.assertEqual({r["headers"]["authorization"] for r in server.requests}, {f"Bearer {TOKEN}"})
        finally:
            server.close()

    def test_a_token_no_header_can_carry_is_refused_without_being_echoed(self) -> None:
        for bad in (TOKEN + "\nX-Injected: 1", TOKEN[:10] + " " + TOKEN[10:], TOKEN + "\0", TOKEN + "é", "\t" + TOKEN + "\x7f"):
            for make in (KnowHub, AsyncKnowHub):
                with self.subTest(token=repr(bad[-6:]), client=make.__name__):
                    with self.assertRaises(KnowHubError) as caught:
                        make("http://127.0.0.1:9", bad)
                    error = caught.exception
                    self.assertEqual(error.code, "validation_error")
                    self.assertEqual(error.issues[0]["path"], "token")
                    for shown in (str(error), repr(error), repr(error.to_dict())):
                        self.assertNotIn("S3cretTokenValue", shown)


class UrlTest(unittest.TestCase):
    def test_a_base_url_that_is_not_http_or_https_is_refused_at_construction(self) -> None:
        for url in ("file:///etc/passwd", "ftp://files.example.com", "javascript:alert(1)", "localhost:8420", "http://", "gopher://x:70"):
            for make in (KnowHub, AsyncKnowHub):
                with self.subTest(url=url, client=make.__name__):
                    with self.assertRaises(KnowHubError) as caught:
                        make(url)
                    self.assertEqual((caught.exception.code, caught.exception.issues[0]["path"]), ("validation_error", "url"))
        with self.assertRaises(KnowHubError) as caught:
            KnowHub("file:///tmp/x")
        self.assertIn("http:// or https://, not file://", caught.exception.message)
        with mock.patch.dict(os.environ, {"KNOWHUB_URL": "file:///tmp/knowhub"}):
            with self.assertRaises(KnowHubError):
                KnowHub()
        # http and https, any case, are accepted (no I/O until the first call).
        for url in ("http://127.0.0.1:8420", "HTTPS://hub.example.com/", " http://[::1]:8420 "):
            self.assertTrue(KnowHub(url).url.lower().startswith("http"))


class RedirectTest(unittest.TestCase):
    def test_a_cross_origin_redirect_of_a_request_with_a_body_is_not_followed(self) -> None:
        for code in (301, 302, 303, 307, 308):
            with self.subTest(code=code):
                elsewhere = Scripted([(201, {}, b'{"id": "x"}')])
                hub = Scripted([(code, {"location": elsewhere.url + "/api/resource"}, b"")])
                try:
                    for call in both(lambda kh: kh.resource_save("creds/db", "DB", secure_body="pg-S3cretBody")):
                        with self.assertRaises(KnowHubError) as caught:
                            call(hub.url, TOKEN)
                        self.assertEqual((caught.exception.code, caught.exception.status), ("http_error", code))
                        self.assertIn("another origin", caught.exception.message)
                    self.assertEqual(elsewhere.requests, [])
                    self.assertEqual(len(hub.requests), 2)
                finally:
                    hub.close()
                    elsewhere.close()

    def test_same_origin_redirects_keep_the_body_and_cross_origin_reads_lose_the_token(self) -> None:
        seen: List[Dict[str, Any]] = []

        def same(h: Any) -> Any:
            return (307, {"location": "/api/resource2"}, b"") if h.path == "/api/resource" else (201, {}, b'{"id": "creds/db"}')

        hub = Scripted([], handler=same)
        target = Scripted([OK])
        away = Scripted([(302, {"location": target.url + "/healthz"}, b"")])
        try:
            for call in both(lambda kh: kh.resource_save("creds/db", "DB", secure_body="pg-S3cretBody")):
                call(hub.url, TOKEN)
            seen = [r for r in hub.requests if r["path"] == "/api/resource2"]
            self.assertEqual(len(seen), 2)
            for r in seen:
                self.assertIn(b"pg-S3cretBody", r["body"])
                self.assertEqual(r["headers"]["authorization"], f"Bearer {TOKEN}")
            for call in both(lambda kh: kh.healthz()):
                self.assertEqual(call(away.url, TOKEN)["status"], "ok")
            self.assertEqual([r["headers"].get("authorization") for r in target.requests], [None, None])
        finally:
            for s in (hub, target, away):
                s.close()

    def test_another_host_name_is_another_origin(self) -> None:
        elsewhere = Scripted([(201, {}, b'{"id": "x"}')])
        hub = Scripted([(307, {"location": elsewhere.url.replace("127.0.0.1", "localhost") + "/api/resource"}, b"")])
        try:
            with self.assertRaises(KnowHubError):
                KnowHub(hub.url, TOKEN).resource_save("creds/db", "DB", secure_body="pg-S3cretBody")
            self.assertEqual(elsewhere.requests, [])
        finally:
            hub.close()
            elsewhere.close()


if __name__ == "__main__":
    unittest.main()
