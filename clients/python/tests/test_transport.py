"""The transport against scripted HTTP servers: retries where they are safe, Retry-After, timeouts,
answers that are not KnowHub's, redirects (the token stays with its origin)."""

import http.server
import json
import socket
import threading
import time
import unittest
from typing import Any, Callable, Dict, List, Tuple

import support  # noqa: F401  (puts the package on the path)

from knowhub import KnowHub, KnowHubError
from knowhub._http import parse_retry_after

Answer = Tuple[int, Dict[str, str], bytes]


class Scripted:
    """An HTTP server answering from a script: one ``(status, headers, body)`` per request, the last one repeated."""

    def __init__(self, answers: List[Answer], handler: Callable[[Any], Answer] = None) -> None:  # type: ignore[assignment]
        self.requests: List[Dict[str, Any]] = []
        scripted = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                scripted.requests.append({"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": self.rfile.read(length)})
                status, headers, body = handler(self) if handler else answers[min(len(scripted.requests), len(answers)) - 1]
                self.send_response(status)
                for k, v in {"content-type": "application/json", "content-length": str(len(body)), **headers}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def error_body(code: str, message: str = "m") -> bytes:
    return json.dumps({"error": {"code": code, "message": message, "details": {"x": 1}}}).encode()


OK: Answer = (200, {}, b'{"status": "ok", "version": "9"}')


class TransportTest(unittest.TestCase):
    def test_idempotent_calls_are_retried_after_transient_answers(self) -> None:
        server = Scripted([(503, {}, error_body("database_unavailable")), (502, {}, b"bad gateway"), OK])
        try:
            self.assertEqual(KnowHub(server.url).healthz()["version"], "9")
            self.assertEqual(len(server.requests), 3)
            ids = {r["headers"]["x-request-id"] for r in server.requests}
            self.assertEqual(len(ids), 1)  # one request id across the retries
        finally:
            server.close()

    def test_unsafe_calls_are_not_retried_except_after_429(self) -> None:
        server = Scripted([(503, {}, error_body("database_unavailable"))])
        try:
            with self.assertRaises(KnowHubError) as caught:
                KnowHub(server.url).save("t", "c", ["tool"])
            self.assertEqual((caught.exception.code, caught.exception.status, len(server.requests)), ("database_unavailable", 503, 1))
        finally:
            server.close()
        server = Scripted([(429, {"retry-after": "0.2"}, error_body("rate_limited")), (201, {}, b'{"id": "knowledge-x"}')])
        try:
            started = time.monotonic()
            self.assertEqual(KnowHub(server.url).save("t", "c", ["tool"])["id"], "knowledge-x")
            self.assertGreaterEqual(time.monotonic() - started, 0.2)
            self.assertEqual([json.loads(r["body"])["task"] for r in server.requests], ["t", "t"])
        finally:
            server.close()

    def test_permanent_codes_and_long_retry_after_fail_at_once(self) -> None:
        server = Scripted([(501, {}, error_body("llm_not_configured")), (503, {}, error_body("embedder_mismatch"))])
        try:
            with self.assertRaises(KnowHubError) as caught:
                KnowHub(server.url).healthz()
            self.assertEqual((caught.exception.code, caught.exception.details), ("llm_not_configured", {"x": 1}))
        finally:
            server.close()
        server = Scripted([(429, {"retry-after": "120"}, error_body("rate_limited"))])
        try:
            with self.assertRaises(KnowHubError) as caught:
                KnowHub(server.url).healthz()
            self.assertEqual((caught.exception.code, caught.exception.retry_after, len(server.requests)), ("rate_limited", 120.0, 1))
        finally:
            server.close()

    def test_answers_that_are_not_knowhubs(self) -> None:
        server = Scripted([(404, {"content-type": "text/html"}, b"<h1>nginx</h1>")])
        try:
            with self.assertRaises(KnowHubError) as caught:
                KnowHub(server.url).get("knowledge-x")
            self.assertEqual((caught.exception.code, caught.exception.status), ("not_found", 404))
        finally:
            server.close()
        server = Scripted([(418, {}, error_body("teapot_error", "short and stout")), (200, {}, b"not json")])
        try:
            with self.assertRaises(KnowHubError) as caught:
                KnowHub(server.url, retries=0).healthz()
            self.assertEqual((caught.exception.code, caught.exception.server_code, caught.exception.message), ("http_error", "teapot_error", "short and stout"))
            with self.assertRaises(KnowHubError) as caught:
                KnowHub(server.url, retries=0).healthz()
            self.assertEqual(caught.exception.code, "invalid_response")
        finally:
            server.close()

    def test_timeout(self) -> None:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(5)  # accepts connections, never answers
        try:
            started = time.monotonic()
            with self.assertRaises(KnowHubError) as caught:
                KnowHub(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=0.3, retries=0).healthz()
            self.assertEqual((caught.exception.code, caught.exception.status), ("timeout", None))
            self.assertLess(time.monotonic() - started, 5)
        finally:
            listener.close()

    def test_redirects_keep_the_token_on_their_origin(self) -> None:
        target = Scripted([OK])
        same = Scripted([], handler=lambda h: (307, {"location": "/healthz2"}, b"") if h.path == "/healthz" else OK)
        other = Scripted([(307, {"location": target.url + "/healthz"}, b"")])
        try:
            self.assertEqual(KnowHub(same.url, "kh_secret").healthz()["status"], "ok")
            self.assertEqual([r["headers"].get("authorization") for r in same.requests], ["Bearer kh_secret", "Bearer kh_secret"])
            self.assertEqual(KnowHub(other.url, "kh_secret").healthz()["status"], "ok")
            self.assertIsNone(target.requests[0]["headers"].get("authorization"))
        finally:
            for s in (target, same, other):
                s.close()

    def test_query_strings_and_bodies(self) -> None:
        server = Scripted([(200, {}, b'{"results": [], "count": 0}')])
        try:
            KnowHub(server.url).search("登录 & selenium", types=["tool", "strategy"], explain=True)
            self.assertEqual(
                server.requests[0]["path"], "/api/knowledge/search?q=%E7%99%BB%E5%BD%95%20%26%20selenium&top_k=5&min_score=3&types=tool%2Cstrategy&explain=true"
            )
        finally:
            server.close()

    def test_parse_retry_after(self) -> None:
        self.assertEqual(parse_retry_after("2"), 2.0)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("soon"))
        self.assertAlmostEqual(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0), 10.0)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
