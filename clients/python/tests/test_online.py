"""Against a real server: this repository's build on a database the test creates (tests/server.py)."""

import os
import tempfile
import threading
import time
import unittest

from licence_client import LicenseClient, LicenseServerError, NetworkError, VerificationError
from cryptography.hazmat.primitives.asymmetric import ed25519

from licence_client.client import armor, dearmor
from server import TestServer, envelope_less_transport, fingerprint_of, stand_in_transport

SERVER = None


def setUpModule():
    global SERVER
    SERVER = TestServer().start()


def tearDownModule():
    if SERVER:
        SERVER.remove()


class AgainstARealServer(unittest.TestCase):
    def setUp(self):
        self.shipped = SERVER.get("/api/v1/public-key")

    def client(self, seed, **options):
        folder = tempfile.mkdtemp(prefix="licence-client-online-")
        settings = dict(
            server_url=SERVER.url,
            state_path=os.path.join(folder, "licence-state.json"),
            app_salt="online-test",
            public_keys=[self.shipped],
            fingerprint=fingerprint_of(seed),
            product="POS_RETAIL",
            retries=1,
            timeout=5,
        )
        settings.update(options)
        return LicenseClient(**settings)

    def test_the_server_sends_envelopes_when_asked_and_answers_without_one_are_refused(self):
        key = SERVER.create_license()["license_key"]
        plain_key = SERVER.create_license()["license_key"]
        plain = SERVER.post("/api/v1/activate", {"license_key": plain_key, "machine_fingerprint": fingerprint_of("plain-0"), "hostname": "till-00", "os": "linux"})
        self.assertIn("license", plain)
        self.assertNotIn("envelope", plain, "a client that does not ask gets today's answer")
        client = self.client("plain-1", transport=envelope_less_transport)
        with self.assertRaises(VerificationError) as caught:
            client.activate(key)
        self.assertEqual(caught.exception.reason, "UNSUPPORTED_FORMAT")
        self.assertEqual(client.check().reason, "NO_LICENSE")

    def test_activate_validate_check_license_file_heartbeat_deactivate(self):
        key = SERVER.create_license()["license_key"]
        client = self.client("flow-1")
        license = client.activate(key, hostname="till-01", app_version="1.0.0")
        self.assertEqual(license["license_key"], key)
        self.assertEqual(license["key_id"], self.shipped["key_id"])
        self.assertTrue(license["signed_at"])

        answer = client.validate()
        self.assertIs(answer["valid"], True)
        self.assertIsNone(answer["code"])
        self.assertEqual(answer["key_id"], self.shipped["key_id"])

        offline = client.check()
        self.assertTrue(offline.ok, offline.message)
        self.assertEqual((offline.source, offline.status), ("activation", "active"))

        file_answer = client.license_file()
        self.assertTrue(file_answer["file_expires_at"])
        offline = client.check()
        self.assertTrue(offline.ok, offline.message)
        self.assertEqual(offline.source, "license_file")
        self.assertIsNotNone(offline.file_expires_at)

        beat = client.heartbeat()
        self.assertIs(beat["valid"], True)

        result = client.deactivate()
        self.assertIs(result["can_reactivate"], True)
        self.assertEqual(client.check().reason, "NO_LICENSE")
        with self.assertRaises(LicenseServerError) as caught:
            client.heartbeat()
        self.assertEqual(caught.exception.code, "NOT_ACTIVATED")

    def test_start_trial_keeps_the_trial_like_an_activation_once_per_machine(self):
        SERVER.admin("POST", "/products", {"code": "PY_TRIAL", "name": "Python trial product", "key_prefix": "PTR", "trial": {"days": 14}})
        client = self.client("trial-1", product="PY_TRIAL")
        trial = client.start_trial(hostname="till-07", app_version="2.0.0")
        self.assertEqual(trial["license_type"], "TRIAL")
        self.assertEqual(trial["product"], "PY_TRIAL")
        checked = client.check()
        self.assertTrue(checked.ok, checked.message)
        self.assertIsNotNone(checked.expires_at, "a trial expires")
        self.assertTrue(client.validate()["valid"])
        again = self.client("trial-1", product="PY_TRIAL")
        with self.assertRaises(LicenseServerError) as caught:
            again.start_trial()
        self.assertEqual(caught.exception.code, "TRIAL_ALREADY_USED")
        self.assertEqual(again.check().reason, "NO_LICENSE")
        with self.assertRaises(LicenseServerError) as caught:
            self.client("trial-2").start_trial()
        self.assertEqual(caught.exception.code, "TRIALS_DISABLED")
        with self.assertRaises(TypeError):
            self.client("trial-3", product=None).start_trial()

    def test_check_for_update_offers_the_newest_release_and_download_update_checks_the_bytes(self):
        import urllib.request

        data = ("python client update %f\n" % time.time()).encode() * 2000
        release = SERVER.admin("POST", "/products/POS_RETAIL/releases", {"version": "8.1.0", "notes": "Faster start"})
        request = urllib.request.Request(
            "%s/api/v1/admin/releases/%d/artifacts/app-8.1.0.tar.gz?platform=linux&arch=x64" % (SERVER.url, release["id"]),
            data=data, method="PUT", headers={"x-api-key": SERVER.api_key, "content-type": "application/octet-stream"},
        )
        with urllib.request.urlopen(request) as answer:
            self.assertEqual(answer.status, 201)
        SERVER.admin("POST", "/releases/%d/publish" % release["id"])
        client = self.client("update-1")
        with self.assertRaises(LicenseServerError) as caught:
            client.check_for_update("8.0.0")
        self.assertEqual(caught.exception.code, "NOT_ACTIVATED")
        client.activate(SERVER.create_license()["license_key"])
        answer = client.check_for_update("8.0.0", platform_name="linux", arch="x64")
        self.assertEqual(answer["update"]["version"], "8.1.0")
        self.assertEqual(answer["update"]["notes"], "Faster start")
        artifact = answer["update"]["artifacts"][0]
        folder = tempfile.mkdtemp(prefix="licence-client-update-")
        saved = client.download_update(artifact, os.path.join(folder, artifact["filename"]))
        with open(saved, "rb") as f:
            self.assertEqual(f.read(), data)
        with self.assertRaises(VerificationError) as caught:
            client.download_update(dict(artifact, sha256="0" * 64), os.path.join(folder, "tampered"))
        self.assertEqual(caught.exception.reason, "DIGEST_MISMATCH")
        self.assertFalse(os.path.exists(os.path.join(folder, "tampered")))
        self.assertIsNone(client.check_for_update("8.1.0", platform_name="linux", arch="x64")["update"])
        self.assertIsNone(client.check_for_update("8.0.0", platform_name="darwin", arch="arm64")["update"])

    def test_server_error_codes_arrive_typed(self):
        with self.assertRaises(LicenseServerError) as caught:
            self.client("errors-1").activate("POS-AAAAA-AAAAA-AAAAA-AAAAA")
        self.assertEqual((caught.exception.code, caught.exception.status), ("INVALID_KEY", 400))
        key = SERVER.create_license()["license_key"]
        self.client("errors-2").activate(key)
        with self.assertRaises(LicenseServerError) as caught:
            self.client("errors-3").activate(key)
        self.assertEqual(caught.exception.code, "ALREADY_ACTIVATED")
        self.assertIn("activated_on", caught.exception.details)

    def test_unreachable_server_is_a_network_error(self):
        client = self.client("network-1", server_url="http://127.0.0.1:9", retries=0, timeout=2)
        with self.assertRaises(NetworkError):
            client.activate("POS-AAAAA-AAAAA-AAAAA-AAAAA")

    def test_revocation_seen_online_makes_check_refuse(self):
        created = SERVER.create_license()
        client = self.client("revoke-1")
        client.activate(created["license_key"])
        SERVER.admin("POST", "/licenses/%s/revoke" % created["id"], {"reason": "chargeback"})
        answer = client.validate()
        self.assertIs(answer["valid"], False)
        self.assertEqual(answer["code"], "KEY_REVOKED")
        self.assertEqual(client.check().reason, "INVALIDATED")

    def test_usage_counts_once_per_idempotency_key_and_stops_at_the_limit(self):
        key = SERVER.create_license(policy={"max_uses": 3, "uses_period": "month"})["license_key"]
        client = self.client("usage-1")
        client.activate(key)
        first = client.usage(increment=2, idempotency_key="retry-key-0001")
        self.assertEqual((first["uses"], first["max_uses"], first["remaining"]), (2, 3, 1))
        again = client.usage(increment=2, idempotency_key="retry-key-0001")
        self.assertEqual(again["uses"], 2, "the same idempotency key counts once")
        with self.assertRaises(LicenseServerError) as caught:
            client.usage(increment=2)
        self.assertEqual((caught.exception.code, caught.exception.status), ("USAGE_LIMIT_REACHED", 403))
        self.assertEqual(caught.exception.details.get("remaining"), 1)

    def test_air_gapped_activation(self):
        key = SERVER.create_license()["license_key"]
        client = self.client("airgap-1")
        request = client.create_activation_request(key, hostname="vault-01")
        self.assertTrue(request.startswith("-----BEGIN ACTIVATION REQUEST-----\n"))
        self.assertIs(dearmor("ACTIVATION REQUEST", request)["envelope"], True)
        answer = SERVER.admin("POST", "/offline-activations", {"request": request})
        self.assertIn("envelope", dearmor("LICENSE FILE", answer["license_file"]), "the request asked for a version 2 file")
        result = client.import_license_file(answer["license_file"])
        self.assertTrue(result.ok, result.message)
        self.assertEqual(result.source, "license_file")
        with self.assertRaises(VerificationError) as caught:
            self.client("airgap-other").import_license_file(answer["license_file"])
        self.assertEqual(caught.exception.reason, "FINGERPRINT_MISMATCH")
        # A request without `envelope` gets a version 1 file, which this client refuses.
        old_request = dict(dearmor("ACTIVATION REQUEST", request), envelope=False, license_key=SERVER.create_license()["license_key"])
        old = SERVER.admin("POST", "/offline-activations", {"request": armor("ACTIVATION REQUEST", old_request)})
        self.assertNotIn("envelope", dearmor("LICENSE FILE", old["license_file"]))
        with self.assertRaises(VerificationError) as caught:
            self.client("airgap-1").import_license_file(old["license_file"])
        self.assertEqual(caught.exception.reason, "UNSUPPORTED_FORMAT")

    def test_heartbeat_loop_beats_and_reports_a_lost_seat(self):
        created = SERVER.create_license(policy={"heartbeat_timeout_seconds": 30})
        client = self.client("loop-1")
        client.activate(created["license_key"])
        beats, lost = [], threading.Event()
        loop = client.start_heartbeat(on_beat=beats.append, on_seat_lost=lambda err: lost.set())
        deadline = time.time() + 10
        while not beats and time.time() < deadline:
            time.sleep(0.05)
        loop.stop()
        loop.join(10)
        self.assertEqual(beats[0]["heartbeat_timeout_seconds"], 30)
        self.assertTrue(beats[0]["next_heartbeat_before"])
        SERVER.admin("POST", "/licenses/%s/release" % created["id"], {})
        with self.assertRaises(LicenseServerError):
            client.heartbeat()
        self.assertEqual(client.check().reason, "SEAT_LOST")

    def test_zz_rotations_rsa_ed25519_rsa_with_only_the_first_key_shipped(self):
        # Runs last: it changes the server's active key, through the admin API, twice.
        key = SERVER.create_license()["license_key"]
        client = self.client("rotate-1")
        client.activate(key)
        for algorithm in ("Ed25519", "RSA-SHA256"):
            rotated = SERVER.admin("POST", "/signing-keys/rotate", {"algorithm": algorithm})
            self.assertNotEqual(rotated["key_id"], self.shipped["key_id"])
            deadline = time.time() + 15
            while client.validate()["key_id"] != rotated["key_id"]:
                self.assertLess(time.time(), deadline, "the server never signed with the rotated key")
                time.sleep(0.3)
            self.assertTrue(client.check().ok, client.check().message)
            # A new installation that shipped only the first key activates and fetches a file signed by the new key.
            fresh = self.client("rotate-%s" % algorithm)
            self.assertEqual(fresh.activate(SERVER.create_license()["license_key"])["key_id"], rotated["key_id"])
            fresh.license_file()
            self.assertTrue(fresh.check().ok, fresh.check().message)
            envelope = dearmor("LICENSE FILE", fresh._store.load()[1]["license_file"])["envelope"]
            self.assertEqual(envelope["alg"], "EdDSA" if algorithm == "Ed25519" else "RS256")
            # Pinned to the shipped key (pin_to_shipped_keys=True): the rotated key is refused.
            pinned = self.client("rotate-pinned-%s" % algorithm, pin_to_shipped_keys=True)
            with self.assertRaises(VerificationError) as caught:
                pinned.activate(SERVER.create_license()["license_key"])
            self.assertEqual(caught.exception.reason, "UNKNOWN_KEY")

    def test_zz_stand_in_server_is_refused(self):
        stand_in = self.client("stand-in-1", transport=stand_in_transport(ed25519.Ed25519PrivateKey.generate()))
        with self.assertRaises(VerificationError) as caught:
            stand_in.activate(SERVER.create_license()["license_key"])
        self.assertEqual(caught.exception.reason, "UNKNOWN_KEY")
        self.assertEqual(stand_in.check().reason, "NO_LICENSE")

if __name__ == "__main__":
    unittest.main()
