"""Relay leases (docs/clients.md, Relay leases) against the relay case list and a relay on the network, and the
state file's folder (docs/clients.md, The state file)."""

import http.server
import json
import os
import stat
import tempfile
import threading
import unittest

from licence_client import LicenseClient, LicenseServerError, StateError, VerificationError
from licence_client.conformance import run_cases

RELAY_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "relay-conformance.json")
RELAY_VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "test-vectors", "relay.json")
with open(RELAY_LIST, "r", encoding="utf-8") as _handle:
    CASES = json.load(_handle)


def case_named(name):
    return next(c for c in CASES["cases"] if c["name"] == name)


def parse_time(text):
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def client_for(case, state_path=None):
    data = case["input"]
    return LicenseClient(
        server_url="http://127.0.0.1:9/",
        state_path=state_path or os.path.join(tempfile.mkdtemp(prefix="relay-client-"), "state.json"),
        app_salt="relay-test",
        public_keys=[CASES["keys"][name] for name in data["trusted_keys"]],
        pin_to_shipped_keys=True,
        fingerprint=data["machine_fingerprint"],
        product=data.get("product"),
        now=lambda: parse_time(data["now"]),
        retries=0,
    )


class FixedRelay:
    """A relay on the network answering with one fixed lease answer (the real relay: test_relay_online.py)."""

    def __init__(self, answer):
        self.paths, self.bodies, self.leased = [], [], False
        relay = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"null")
                relay.paths.append(self.path)
                relay.bodies.append(body)
                if self.path == "/relay/v1/leases":
                    relay.leased = True
                    return self.send(201, answer)
                if not relay.leased:
                    return self.send(400, {"error": {"code": "NOT_ACTIVATED", "message": "no lease", "details": {}}})
                if self.path == "/relay/v1/leases/heartbeat":
                    return self.send(200, answer)
                if self.path == "/relay/v1/leases/release":
                    relay.leased = False
                    return self.send(200, {"released": 1})
                return self.send(404, {"error": {"code": "NOT_FOUND", "message": "no route", "details": {}}})

            def send(self, status, value):
                data = json.dumps(value).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class RelayCaseList(unittest.TestCase):
    def test_the_servers_pool_and_lease_vectors_agree(self):
        self.assertEqual(run_cases(RELAY_VECTORS), [])

    def test_every_relay_case_of_the_clients_list_agrees(self):
        self.assertEqual(run_cases(RELAY_LIST), [])
        reasons = {c["expect"]["reason"] for c in CASES["cases"]}
        for reason in ("SIGNATURE_INVALID", "POOL_MISMATCH", "WRONG_RELAY_KEY", "PRODUCT_MISMATCH", "POOL_EXPIRED",
                       "LEASE_MISMATCH", "LEASE_EXPIRED", None):
            self.assertIn(reason, reasons)


class LeaseFromRelay(unittest.TestCase):
    def test_leases_heartbeats_and_releases_a_verified_seat(self):
        valid = case_named("relay-valid")
        relay = FixedRelay(valid["input"]["answer"])
        try:
            seat = client_for(valid).lease_from_relay(relay.url, hostname="bench-7")
            self.assertEqual(seat.lease["lease_id"], valid["input"]["answer"]["lease"]["lease_id"])
            self.assertEqual(seat.pool["license"]["product"], "CAD_SUITE")
            self.assertEqual(relay.bodies[0], {"machine_fingerprint": valid["input"]["machine_fingerprint"], "hostname": "bench-7"})
            self.assertEqual(seat.heartbeat()["lease_id"], valid["input"]["answer"]["lease"]["lease_id"])
            self.assertEqual(seat.release(), {"released": 1})
            with self.assertRaises(LicenseServerError) as raised:
                seat.heartbeat()
            self.assertEqual(raised.exception.code, "NOT_ACTIVATED")
            self.assertEqual(
                relay.paths,
                ["/relay/v1/leases", "/relay/v1/leases/heartbeat", "/relay/v1/leases/release", "/relay/v1/leases/heartbeat"],
            )
        finally:
            relay.close()

    def test_refuses_a_forged_pool_or_a_lease_signed_by_another_key(self):
        for name in ("relay-pool-forged", "relay-pool-unknown-key", "relay-lease-other-key", "relay-lease-vendor-key",
                     "relay-lease-other-fingerprint"):
            with self.subTest(name):
                case = case_named(name)
                relay = FixedRelay(case["input"]["answer"])
                try:
                    with self.assertRaises(VerificationError) as raised:
                        client_for(case).lease_from_relay(relay.url)
                    self.assertEqual(raised.exception.code, case["expect"]["reason"])
                finally:
                    relay.close()

    def test_the_heartbeat_loop_stops_when_the_relay_says_the_seat_is_gone(self):
        valid = case_named("relay-valid")
        relay = FixedRelay(valid["input"]["answer"])
        try:
            seat = client_for(valid).lease_from_relay(relay.url)
            # The fixture's interval is 100 s; 0.05 s is what a short RELAY_LEASE_SECONDS gives.
            seat.lease = dict(seat.lease, heartbeat_interval_seconds=0.05)
            beats, lost = [], []

            def on_beat(lease):
                beats.append(lease)
                seat.lease = dict(lease, heartbeat_interval_seconds=0.05)
                if len(beats) == 2:
                    seat.release()

            loop = seat.start_heartbeat(on_beat=on_beat, on_lease_lost=lambda err: lost.append(err.code))
            loop.join(10)
            self.assertTrue(loop.stopped)
            self.assertEqual(len(beats), 2)
            self.assertEqual(lost, ["NOT_ACTIVATED"])
        finally:
            relay.close()


class StateFolder(unittest.TestCase):
    def test_a_missing_folder_is_created_with_mode_0700_parents_included(self):
        root = tempfile.mkdtemp(prefix="state-folder-")
        client_for(case_named("relay-valid"), os.path.join(root, "app", "licence", "state.json"))
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(root, "app", "licence")).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(root, "app")).st_mode), 0o700)

    def test_a_folder_that_cannot_be_created_is_a_state_error_before_any_network_call(self):
        root = tempfile.mkdtemp(prefix="state-folder-")
        with open(os.path.join(root, "a-file"), "w", encoding="utf-8") as handle:
            handle.write("not a folder")
        requests = []

        def transport(method, url, body, headers, timeout):
            requests.append(url)
            raise AssertionError("no network call may happen")

        path = os.path.join(root, "a-file", "state.json")
        with self.assertRaises(StateError) as raised:
            LicenseClient(
                server_url="http://127.0.0.1:9/", state_path=path, app_salt="x",
                public_keys=[CASES["keys"]["ed25519"]], transport=transport,
            )
        self.assertEqual(raised.exception.code, "STATE_PATH")
        self.assertEqual(raised.exception.path, path)
        self.assertNotIsInstance(raised.exception, OSError)
        self.assertEqual(requests, [])


if __name__ == "__main__":
    unittest.main()
