"""Starts this repository's built server (`npm run build` at the root first) on a database the test creates.

PostgreSQL: TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); the test creates its own
database there with `createdb` and drops it afterwards.
"""

import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from licence_client.client import urllib_transport  # noqa: E402
from licence_client.keys import PublicKey, b64url_decode, b64url_encode  # noqa: E402

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
ADMIN_DATABASE_URL = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _pg_args(url):
    parts = urllib.parse.urlsplit(url)
    args = ["-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 5432), "-U", parts.username or "postgres"]
    env = dict(os.environ, PGPASSWORD=urllib.parse.unquote(parts.password or ""))
    return args, env, parts


class TestServer:
    __test__ = False

    def __init__(self):
        self.port = _free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.api_key = "test-key-" + secrets.token_hex(12)
        self.database = "licence_client_py_test_" + secrets.token_hex(4)
        self.data_dir = tempfile.mkdtemp(prefix="licence-client-py-")
        self.process = None
        self.log = open(os.path.join(self.data_dir, "server.log"), "wb")

    def start(self):
        main = os.path.join(REPO_ROOT, "dist", "src", "main.js")
        if not os.path.exists(main):
            raise RuntimeError("build the server first: npm run build at the repository root")
        args, env, parts = _pg_args(ADMIN_DATABASE_URL)
        subprocess.run(["createdb", *args, self.database], check=True, env=env)
        database_url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + self.database, "", ""))
        self.process = subprocess.Popen(
            ["node", main],
            cwd=REPO_ROOT,
            env={
                "PATH": os.environ.get("PATH", ""),
                "HOME": os.environ.get("HOME", "/tmp"),
                "PORT": str(self.port),
                "DATA_DIR": self.data_dir,
                "DATABASE_URL": database_url,
                "API_KEY": self.api_key,
                "ADMIN_PASSWORD": "client-test-password",
                "LOG_LEVEL": "warn",
                "RATE_LIMIT_ACTIVATE": "1000",
                "RATE_LIMIT_DEACTIVATE": "1000",
                "RATE_LIMIT_VALIDATE": "1000",
                "RATE_LIMIT_HEARTBEAT": "1000",
            },
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 90
        while True:
            if self.process.poll() is not None:
                raise RuntimeError("server exited during start-up: " + self._output())
            if time.time() > deadline:
                raise RuntimeError("server did not start: " + self._output())
            try:
                with urllib.request.urlopen(self.url + "/api/v1/health", timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.15)

    def _output(self):
        self.log.flush()
        with open(os.path.join(self.data_dir, "server.log"), "rb") as handle:
            return handle.read()[-5000:].decode("utf-8", "replace")

    def remove(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        args, env, _ = _pg_args(ADMIN_DATABASE_URL)
        subprocess.run(["dropdb", *args, "--if-exists", "--force", self.database], check=False, env=env)
        subprocess.run(["rm", "-rf", self.data_dir], check=False)

    def admin(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"x-api-key": self.api_key}
        if data is not None:
            headers["content-type"] = "application/json"
        answer = urllib_transport(method, self.url + "/api/v1/admin" + path, data, headers, 10)
        parsed = json.loads(answer.body.decode("utf-8"))
        if not 200 <= answer.status < 300:
            raise AssertionError("%s %s: %s %s" % (method, path, answer.status, parsed))
        return parsed

    def post(self, path, body):
        answer = urllib_transport("POST", self.url + path, json.dumps(body).encode("utf-8"), {"content-type": "application/json"}, 10)
        parsed = json.loads(answer.body.decode("utf-8"))
        if not 200 <= answer.status < 300:
            raise AssertionError("POST %s: %s %s" % (path, answer.status, parsed))
        return parsed

    def get(self, path):
        answer = urllib_transport("GET", self.url + path, None, {}, 10)
        return json.loads(answer.body.decode("utf-8"))

    def create_license(self, **overrides):
        body = {"product_code": "POS_RETAIL", "license_type": "YEARLY", "customer_name": "Klijent d.o.o."}
        body.update(overrides)
        return self.admin("POST", "/licenses", body)


def fingerprint_of(seed):
    return "sha256:" + seed.encode("ascii").ljust(32, b".").hex()[:64]


# ---- transports between the client and the real server ------------------------------------------------------------


def _rewriting_transport(rewrite):
    def transport(method, url, body, headers, timeout):
        answer = urllib_transport(method, url, body, headers, timeout)
        if 200 <= answer.status < 300:
            parsed = json.loads(answer.body.decode("utf-8"))
            answer.body = json.dumps(rewrite(urllib.parse.urlsplit(url).path, parsed)).encode("utf-8")
        return answer

    return transport


def _without_envelope(path, answer):
    return {k: v for k, v in answer.items() if k != "envelope"} if isinstance(answer, dict) else answer


# A server from before envelopes: the same answers, without `envelope`.
envelope_less_transport = _rewriting_transport(_without_envelope)


def stand_in_transport(stand_in):
    """
    A stand-in server: it publishes its own Ed25519 key (unendorsed) beside the real keys, and answers with
    envelopes that key signs over the real server's payloads, relabelled with its key id.
    """
    private = stand_in
    public = PublicKey(private.public_key())

    def rewrite(path, answer):
        if path.endswith("/public-keys"):
            entry = {"key_id": public.key_id, "algorithm": "Ed25519", "public_key_pem": public.pem(), "status": "active", "endorsements": []}
            return dict(answer, keys=[entry] + [dict(k, status="retired") for k in answer["keys"]])
        if isinstance(answer, dict) and "envelope" in answer:
            payload = json.loads(b64url_decode(answer["envelope"]["payload"]))
            payload["key_id"] = public.key_id
            signed = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
            envelope = {"payload": b64url_encode(signed), "alg": "EdDSA", "key_id": public.key_id, "signature": b64url_encode(private.sign(signed))}
            return dict(answer, envelope=envelope, **({"license": payload} if "license" in answer else {}))
        return answer

    return _rewriting_transport(rewrite)
