"""Offline: conformance lists, envelopes, endorsement chains, the state file and every state-dependent reason."""

import json
import os
import subprocess
import tempfile
import unittest

import vectors
from licence_client import LicenseClient, NetworkError, Response, VerificationError
from licence_client.client import armor
from licence_client.conformance import run_cases
from licence_client.keys import b64url_decode, b64url_encode
from vectors import FINGERPRINT, NOW, TestKey, iso, licence, licence_file, signed_licence, validation_answer

SHARED_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "test-vectors", "conformance.json")
NODE_MADE_CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "conformance-from-node.mjs")
T0 = vectors.datetime.datetime.fromisoformat(NOW.replace("Z", "+00:00")).timestamp()
RSA1 = TestKey("RSA-SHA256")


class Clock:
    def __init__(self, at=T0):
        self.at = at

    def __call__(self):
        return self.at


def offline_client(clock=None, transport=None, **options):
    folder = tempfile.mkdtemp(prefix="licence-client-offline-")
    settings = dict(
        server_url="http://127.0.0.1:9/",
        state_path=os.path.join(folder, "state.json"),
        app_salt="offline-test",
        public_keys=[RSA1.shipped()],
        fingerprint=FINGERPRINT,
        product="POS_RETAIL",
        now=clock or Clock(),
        retries=0,
        transport=transport or refuse_network,
    )
    settings.update(options)
    return LicenseClient(**settings)


def refuse_network(method, url, body, headers, timeout):
    raise NetworkError("offline")


class ConformanceLists(unittest.TestCase):
    def test_a_list_made_by_this_test_passes(self):
        document = vectors.conformance_cases()
        reasons = {c["expect"].get("reason") for c in document["cases"]}
        for reason in ("UNSUPPORTED_FORMAT", "MALFORMED_ENVELOPE", "NON_CANONICAL_ENCODING", "ALG_MISMATCH", "KEY_REVOKED", "UNKNOWN_KEY", "INVALID_SIGNATURE",
                       "PAYLOAD_MISMATCH", "FINGERPRINT_MISMATCH", "PRODUCT_MISMATCH", "CLOCK_TAMPERED", "FILE_EXPIRED",
                       "EXPIRED", "NONCE_MISMATCH", "WRONG_SUBJECT", None):
            self.assertIn(reason, reasons)
        self.assertEqual(run_cases(document), [])

    def test_the_shared_list_passes(self):
        self.assertEqual(run_cases(SHARED_LIST), [])

    def test_a_list_made_with_nodes_crypto_passes(self):
        # Key ids, thumbprints, endorsements and envelopes as the server's own library makes them.
        made = subprocess.run(["node", NODE_MADE_CASES], check=True, capture_output=True, text=True)
        document = json.loads(made.stdout)
        self.assertEqual(len(document["cases"]), 6)
        self.assertEqual(run_cases(document), [])

    def test_a_wrong_expectation_is_reported(self):
        document = vectors.conformance_cases()
        document["cases"] = document["cases"][:2]
        document["cases"][0]["expect"] = {"verdict": "refuse", "reason": "EXPIRED"}
        failures = run_cases(document)
        self.assertEqual(len(failures), 1)
        self.assertIn("rsa-file", failures[0])


class Base64url(unittest.TestCase):
    def test_round_trip_and_strictness(self):
        for raw in (b"", b"\xfb", b"\xfb\xff", b"\xfb\xff\xbe"):
            self.assertEqual(b64url_decode(b64url_encode(raw)), raw)
        for bad in ("+/8", "-_8=", "A", "AB=", "AB C", "AAB", None):
            with self.assertRaises(ValueError, msg=repr(bad)):
                b64url_decode(bad)


class OfflineCheck(unittest.TestCase):
    def activated(self, clock=None, **overrides):
        client = offline_client(clock)
        client.store_activation(signed_licence(RSA1, licence(RSA1, **overrides)))
        return client

    def test_no_licence(self):
        self.assertEqual(offline_client().check().reason, "NO_LICENSE")

    def test_a_corrupt_or_edited_state_file(self):
        client = self.activated()
        self.assertTrue(client.check().ok)
        with open(client._store.path, "r", encoding="utf-8") as handle:
            document = json.load(handle)
        document["state"]["latest_signed_at"] = "2000-01-01T00:00:00.000Z"
        with open(client._store.path, "w", encoding="utf-8") as handle:
            json.dump(document, handle)
        self.assertEqual(client.check().reason, "STATE_TAMPERED")
        with open(client._store.path, "w", encoding="utf-8") as handle:
            handle.write('{"state": {"version": 1')
        self.assertEqual(client.check().reason, "STATE_CORRUPT")

    def test_state_is_written_atomically_and_privately(self):
        client = self.activated()
        folder = os.path.dirname(client._store.path)
        self.assertEqual(os.listdir(folder), ["state.json"], "no temporary file is left behind")
        self.assertEqual(os.stat(client._store.path).st_mode & 0o777, 0o600)

    def test_a_negative_validation_invalidates(self):
        client = self.activated()
        client._update(lambda s: s.update(last_validation={"valid": False, "status": "revoked", "code": "KEY_REVOKED",
                                                           "checked_at": NOW}))
        self.assertEqual(client.check().reason, "INVALIDATED")

    def test_floating_seat_overdue_and_lost(self):
        clock = Clock()
        client = self.activated(clock, policy={"heartbeat_timeout_seconds": 60, "max_deactivations_per_30_days": None,
                                               "license_file_ttl_days": 30})
        self.assertTrue(client.check().ok)
        clock.at += 61
        self.assertEqual(client.check().reason, "HEARTBEAT_OVERDUE")
        client._update(lambda s: s.update(seat_lost={"code": "NOT_ACTIVATED", "at": iso(NOW, 61)}))
        self.assertEqual(client.check().reason, "SEAT_LOST")

    def test_offline_too_long(self):
        clock = Clock()
        folder = tempfile.mkdtemp()
        client = offline_client(clock, max_offline_days=14, state_path=os.path.join(folder, "s.json"))
        client.store_activation(signed_licence(RSA1, licence(RSA1)))
        clock.at += 13 * 86400
        self.assertTrue(client.check().ok)
        clock.at += 2 * 86400
        self.assertEqual(client.check().reason, "OFFLINE_TOO_LONG")

    def test_grace_then_expired(self):
        clock = Clock()
        client = self.activated(clock, expires_at=iso(NOW, 86400))
        clock.at += 2 * 86400
        result = client.check()
        self.assertEqual((result.ok, result.status), (True, "grace"))
        clock.at += 7 * 86400
        self.assertEqual(client.check().reason, "EXPIRED")

    def test_a_tampered_stored_envelope(self):
        client = self.activated()
        forged = b64url_encode(vectors.payload_bytes(licence(RSA1, features=["everything"])))

        def change(state):
            state["activation"]["envelope"]["payload"] = forged

        client._update(change)
        self.assertEqual(client.check().reason, "INVALID_SIGNATURE")


class KeysFromTheServer(unittest.TestCase):
    """The key list comes through the transport: endorsed keys are followed, others refused, revocations stick."""

    def setUp(self):
        self.ed, self.rsa2, self.stand_in = TestKey("Ed25519"), TestKey("RSA-SHA256"), TestKey("RSA-SHA256")
        self.published = {"keys": [self.rsa2.entry("active", [self.ed.endorse(self.rsa2)]),
                                   self.ed.entry("retired", [RSA1.endorse(self.ed)]), RSA1.entry("retired")]}
        self.fetches = 0

    def transport(self, method, url, body, headers, timeout):
        if url.endswith("/api/v1/public-keys"):
            self.fetches += 1
            return Response(200, {}, json.dumps(self.published).encode("utf-8"))
        if url.endswith("/api/v1/activate"):
            return Response(200, {}, json.dumps(self.answer).encode("utf-8"))
        raise NetworkError("unexpected " + url)

    def test_rotation_rsa_ed25519_rsa_with_only_the_first_key_shipped(self):
        client = offline_client(transport=self.transport)
        self.answer = signed_licence(self.rsa2, licence(self.rsa2))
        self.assertEqual(client.activate(vectors.LICENSE_KEY)["key_id"], self.rsa2.key_id)
        self.assertEqual(self.fetches, 1)
        self.assertTrue(client.check().ok)

    def test_a_stand_in_servers_key_is_refused(self):
        self.published = {"keys": [self.stand_in.entry("active"), RSA1.entry("retired")]}
        client = offline_client(transport=self.transport)
        self.answer = signed_licence(self.stand_in, licence(self.stand_in))
        with self.assertRaises(VerificationError) as caught:
            client.activate(vectors.LICENSE_KEY)
        self.assertEqual(caught.exception.reason, "UNKNOWN_KEY")
        self.assertEqual(client.check().reason, "NO_LICENSE")

    def test_a_revoked_key_is_dropped_and_stays_dropped(self):
        client = offline_client(transport=self.transport)
        self.answer = signed_licence(RSA1, licence(RSA1))
        client.activate(vectors.LICENSE_KEY)
        self.assertTrue(client.check().ok)
        self.published = {"keys": [self.rsa2.entry("active", [RSA1.endorse(self.rsa2)]), RSA1.entry("revoked")]}
        client.refresh_keys()
        self.assertEqual(client.check().reason, "KEY_REVOKED")
        self.published = {"keys": [RSA1.entry("active")]}
        client.refresh_keys()
        self.assertEqual(client.check().reason, "KEY_REVOKED", "a revocation is final")

    def test_a_licence_file_round_trip_and_version_1(self):
        client = offline_client()
        result = client.import_license_file(licence_file(RSA1))
        self.assertTrue(result.ok, result.message)
        self.assertEqual(result.source, "license_file")
        with self.assertRaises(VerificationError) as caught:
            client.import_license_file(vectors.v1_licence_file(RSA1))
        self.assertEqual(caught.exception.reason, "UNSUPPORTED_FORMAT")
        self.assertTrue(client.check().ok, "a refused import keeps the stored file")

    def test_a_validation_answer_by_a_stand_in_is_refused(self):
        client = offline_client(transport=self.transport)
        seat = {"license_key": vectors.LICENSE_KEY, "machine_fingerprint": FINGERPRINT}
        with self.assertRaises(VerificationError) as caught:
            client.verify_answer(validation_answer(self.stand_in, "n" * 20), "n" * 20, seat)
        self.assertEqual(caught.exception.reason, "UNKNOWN_KEY")

    def test_activation_request_armor(self):
        text = offline_client().create_activation_request(vectors.LICENSE_KEY, hostname="vault", app_version="2.0")
        self.assertEqual(text, armor("ACTIVATION REQUEST", json.loads(vectors.base64.b64decode("".join(text.splitlines()[1:-1])))))
        body = json.loads(vectors.base64.b64decode("".join(text.splitlines()[1:-1])))
        self.assertEqual(body["machine_fingerprint"], FINGERPRINT)
        self.assertEqual(body["product"], "POS_RETAIL")
        self.assertIs(body["envelope"], True, "an air-gapped machine asks for a version 2 file too")


class Options(unittest.TestCase):
    def test_required_options(self):
        with self.assertRaises(TypeError):
            LicenseClient(server_url="http://127.0.0.1:9", state_path="/tmp/x.json", app_salt="s")
        with self.assertRaises(TypeError):
            LicenseClient(server_url="http://127.0.0.1:9", state_path="/tmp/x.json", app_salt="", public_keys=[RSA1.shipped()])
        with self.assertRaises(TypeError):
            offline_client(public_keys=[dict(RSA1.shipped(), key_id="0000000000000000")])
        with self.assertRaises(TypeError):
            offline_client(fingerprint="sha256:XYZ").fingerprint()

    def test_default_fingerprint_is_salted(self):
        a = offline_client(fingerprint=None, app_salt="a").fingerprint()
        b = offline_client(fingerprint=None, app_salt="b").fingerprint()
        self.assertRegex(a, r"^sha256:[0-9a-f]{64}$")
        self.assertNotEqual(a, b)


if __name__ == "__main__":
    unittest.main()
