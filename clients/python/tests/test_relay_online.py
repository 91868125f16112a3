"""Leases from a real relay (this repository's build) lending a pool the vendor server issued (docs/clients.md,
Relay leases); the relay is started by clients/relay-for-tests.mjs."""

import json
import os
import subprocess
import tempfile
import unittest

from licence_client import LicenseClient, LicenseServerError, VerificationError
from server import REPO_ROOT, TestServer, fingerprint_of

SERVER = None


def setUpModule():
    global SERVER
    SERVER = TestServer().start()


def tearDownModule():
    if SERVER:
        SERVER.remove()


class Relay:
    """A real relay, started from a pool the vendor server issued (--forged: re-signed by a key of its own)."""

    def __init__(self, license_key, seats=2, forged=False):
        args = ["node", os.path.join(REPO_ROOT, "clients", "relay-for-tests.mjs"), "--server", SERVER.url,
                "--api-key", SERVER.api_key, "--license", license_key, "--seats", str(seats)]
        self.process = subprocess.Popen(args + (["--forged"] if forged else []), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("relay-for-tests exited %s" % self.process.wait())
        started = json.loads(line)
        self.url, self.pool_id = started["url"], started["pool_id"]

    def stop(self):
        self.process.stdin.close()
        self.process.wait(30)
        self.process.stdout.close()


class LeasesFromARealRelay(unittest.TestCase):
    def setUp(self):
        self.shipped = SERVER.get("/api/v1/public-key")

    def client(self, machine):
        return LicenseClient(
            server_url=SERVER.url,
            state_path=os.path.join(tempfile.mkdtemp(prefix="relay-online-"), "state.json"),
            app_salt="relay-online",
            public_keys=[self.shipped],
            fingerprint=fingerprint_of(machine),
            product="POS_RETAIL",
            retries=0,
        )

    def test_leases_renews_refuses_one_more_than_the_pool_and_takes_a_released_seat_back(self):
        key = SERVER.create_license(limits={"max_installations": 5})["license_key"]
        relay = Relay(key, seats=2)
        try:
            first = self.client("relay-py-1").lease_from_relay(relay.url, hostname="bench-1")
            self.assertEqual(first.pool["pool_id"], relay.pool_id)
            self.assertEqual(first.lease["machine_fingerprint"], fingerprint_of("relay-py-1"))
            again = self.client("relay-py-1").lease_from_relay(relay.url)
            self.assertEqual(again.lease["lease_id"], first.lease["lease_id"])
            self.assertEqual(first.heartbeat()["lease_id"], first.lease["lease_id"])
            self.client("relay-py-2").lease_from_relay(relay.url)
            with self.assertRaises(LicenseServerError) as full:
                self.client("relay-py-3").lease_from_relay(relay.url)
            self.assertEqual(full.exception.code, "ACTIVATION_LIMIT_REACHED")
            self.assertEqual(first.release(), {"released": 1})
            with self.assertRaises(LicenseServerError) as gone:
                first.heartbeat()
            self.assertEqual(gone.exception.code, "NOT_ACTIVATED")
            self.assertEqual(self.client("relay-py-3").lease_from_relay(relay.url).pool["pool_id"], relay.pool_id)
        finally:
            relay.stop()

    def test_refuses_a_relay_whose_pool_another_key_signed(self):
        key = SERVER.create_license(limits={"max_installations": 5})["license_key"]
        relay = Relay(key, forged=True)
        try:
            with self.assertRaises(VerificationError) as refused:
                self.client("relay-py-9").lease_from_relay(relay.url)
            self.assertEqual(refused.exception.code, "SIGNATURE_INVALID")
        finally:
            relay.stop()

    def test_a_pool_the_vendor_server_issued_verifies_and_a_copy_with_more_seats_does_not(self):
        from licence_client.client import armor, dearmor
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519

        key = SERVER.create_license(limits={"max_installations": 5})["license_key"]
        relay_key = ed25519.Ed25519PrivateKey.generate().public_key()
        request = armor("RELAY POOL REQUEST", {
            "license_key": key,
            "relay_fingerprint": fingerprint_of("relay-machine"),
            "relay_public_key": relay_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii"),
            "seats": 3,
        })
        issued = SERVER.admin("POST", "/relay-pools", {"request": request})
        client = self.client("relay-py-pool")
        pool = client.verify_relay_pool(issued["pool_file"])
        self.assertEqual((pool["pool_id"], pool["seats"], pool["license"]["license_key"]), (issued["pool_id"], 3, key))
        document = dearmor("RELAY POOL", issued["pool_file"])
        document["pool"]["seats"] = 300
        with self.assertRaises(VerificationError) as refused:
            client.verify_relay_pool(armor("RELAY POOL", document))
        self.assertEqual(refused.exception.code, "POOL_MISMATCH")


if __name__ == "__main__":
    unittest.main()
