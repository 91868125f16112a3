"""Test vectors made by the tests: keys, envelopes, licence files, endorsed key lists and a conformance list.

Run as a script to print this client's scenario cases (clients/conformance-format.md) with fresh keys:
    /usr/bin/python3 tests/vectors.py /tmp/scenario-cases.json
"""

import base64
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa  # noqa: E402

from licence_client.client import armor  # noqa: E402
from licence_client.keys import PublicKey, b64url_encode, endorsement_message  # noqa: E402

NOW = "2026-11-26T08:00:00.000Z"
FINGERPRINT = "sha256:" + "ab" * 32
OTHER_FINGERPRINT = "sha256:" + "cd" * 32
LICENSE_KEY = "POS-AAAAA-BBBBB-CCCCC-DDDDD"


def iso(text_or_seconds, offset_seconds=0):
    base = datetime.datetime.fromisoformat(text_or_seconds.replace("Z", "+00:00"))
    moved = base + datetime.timedelta(seconds=offset_seconds)
    return moved.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TestKey:
    """A signing key made by the test, signing as the server does (RSA PKCS#1 v1.5 SHA-256, or Ed25519)."""

    __test__ = False

    def __init__(self, algorithm):
        if algorithm == "RSA-SHA256":
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            self.private = ed25519.Ed25519PrivateKey.generate()
        self.public = PublicKey(self.private.public_key())
        self.algorithm = self.public.algorithm
        self.key_id = self.public.key_id
        self.alg = self.public.alg

    def sign(self, message):
        if self.algorithm == "RSA-SHA256":
            return self.private.sign(message, padding.PKCS1v15(), hashes.SHA256())
        return self.private.sign(message)

    def endorse(self, other):
        """This key's endorsement of `other` (the message over other's RFC 7638 thumbprint)."""
        return {"key_id": self.key_id, "signature": b64url_encode(self.sign(endorsement_message(other.public)))}

    def entry(self, status="active", endorsements=()):
        """This key as `GET /api/v1/public-keys` lists it."""
        return {
            "key_id": self.key_id,
            "algorithm": self.algorithm,
            "status": status,
            "public_key_pem": self.public.pem(),
            "endorsements": list(endorsements),
        }

    def shipped(self):
        return {"key_id": self.key_id, "public_key_pem": self.public.pem()}

    def envelope(self, payload_bytes, alg=None):
        return {
            "payload": b64url_encode(payload_bytes),
            "alg": alg or self.alg,
            "key_id": self.key_id,
            "signature": b64url_encode(self.sign(payload_bytes)),
        }

    def legacy_signature(self, payload_bytes):
        prefix = "RSA-SHA256:" if self.algorithm == "RSA-SHA256" else "Ed25519:"
        return prefix + base64.b64encode(self.sign(payload_bytes)).decode("ascii")


def payload_bytes(value):
    # Any serialization will do: a verifier checks the bytes it is given and parses them afterwards.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def licence(key, now=NOW, **overrides):
    value = {
        "license_key": LICENSE_KEY,
        "product": "POS_RETAIL",
        "license_type": "YEARLY",
        "issued_at": iso(now, -86400),
        "expires_at": iso(now, 364 * 86400),
        "activated_at": iso(now, -3600),
        "machine_fingerprint": FINGERPRINT,
        "grace_days": 7,
        "limits": {"max_installations": 1},
        "features": ["reports", "sync"],
        "customer": {"name": "Klijent d.o.o.", "email": None},
        "key_id": key.key_id,
        "signed_at": iso(now, -3600),
        "policy": {"heartbeat_timeout_seconds": None, "max_deactivations_per_30_days": None, "license_file_ttl_days": 30},
    }
    value.update(overrides)
    return value


def signed_licence(key, license, alg=None):
    """An activation answer: today's fields and the envelope."""
    raw = payload_bytes(license)
    return {"license": license, "signature": key.legacy_signature(raw), "envelope": key.envelope(raw, alg)}


def licence_file(key, now=NOW, ttl_days=30, **overrides):
    license = licence(key, now, file_issued_at=iso(now, -60), file_expires_at=iso(now, ttl_days * 86400), **overrides)
    return armor("LICENSE FILE", signed_licence(key, license))


def v1_licence_file(key, now=NOW):
    license = licence(key, now, file_issued_at=iso(now, -60), file_expires_at=iso(now, 30 * 86400))
    return armor("LICENSE FILE", {"license": license, "signature": key.legacy_signature(payload_bytes(license))})


def validation_answer(key, nonce, now=NOW, **overrides):
    answer = {
        "valid": True,
        "status": "active",
        "expires_at": iso(now, 364 * 86400),
        "revoked": False,
        "grace_ends_at": iso(now, 371 * 86400),
        "code": None,
        "nonce": nonce,
        "license_key": LICENSE_KEY,
        "machine_fingerprint": FINGERPRINT,
        "checked_at": now,
        "key_id": key.key_id,
    }
    answer.update(overrides)
    raw = payload_bytes(answer)
    return dict(answer, signature=key.legacy_signature(raw), envelope=key.envelope(raw))


def _reencode(envelope, how):
    raw = base64.urlsafe_b64decode(envelope["payload"] + "=" * (-len(envelope["payload"]) % 4))
    if how == "padding":
        text = base64.urlsafe_b64encode(raw).decode("ascii")
    else:
        text = base64.b64encode(raw).decode("ascii").rstrip("=")
    assert text != envelope["payload"], "the re-encoding must differ for the case to mean anything"
    return dict(envelope, payload=text)


def _file_with(document):
    return armor("LICENSE FILE", document)


def conformance_cases():
    """A conformance list covering every verdict and every reason a case can reach without stored history."""
    rsa1, ed, rsa2 = TestKey("RSA-SHA256"), TestKey("Ed25519"), TestKey("RSA-SHA256")
    root, stand_in, stranger = TestKey("Ed25519"), TestKey("RSA-SHA256"), TestKey("Ed25519")
    loop_a, loop_b = TestKey("RSA-SHA256"), TestKey("Ed25519")
    ed_shipped = TestKey("Ed25519")
    ship_rsa1 = {"shipped_keys": [rsa1.shipped()]}
    rotation = {
        "keys": [
            rsa2.entry("active", [ed.endorse(rsa2)]),
            ed.entry("retired", [rsa1.endorse(ed)]),
            rsa1.entry("retired"),
        ]
    }
    ctx = {"now": NOW, "machine_fingerprint": FINGERPRINT, "product": "POS_RETAIL"}
    cases = []

    def add(name, description, data, expect, trust=None, context=None):
        cases.append(
            {
                "name": name,
                "description": description,
                "input": data,
                "trust": trust or ship_rsa1,
                "context": context or ctx,
                "expect": expect,
            }
        )

    def accept(status="active"):
        return {"verdict": "accept", "reason": None, "status": status}

    def refuse(reason):
        return {"verdict": "refuse", "reason": reason}

    def file_input(text):
        return {"kind": "license_file", "text": text}

    def activation_input(answer):
        return {"kind": "activation", "answer": answer}

    add("rsa-file", "a version 2 licence file signed by the shipped RSA key", file_input(licence_file(rsa1)), accept())
    add(
        "rsa-activation-grace",
        "an activation answer past expires_at but within grace_days",
        activation_input(signed_licence(rsa1, licence(rsa1, expires_at=iso(NOW, -86400)))),
        accept("grace"),
    )
    add(
        "ed25519-shipped-file",
        "an Ed25519 envelope verified with a shipped Ed25519 key",
        file_input(licence_file(ed_shipped)),
        accept(),
        trust={"shipped_keys": [ed_shipped.shipped()]},
    )
    add(
        "rotation-ed25519",
        "RSA (shipped) endorses Ed25519, which signs: accepted without an update",
        file_input(licence_file(ed)),
        accept(),
        trust=dict(ship_rsa1, published_keys=rotation),
    )
    add(
        "rotation-rsa-ed25519-rsa",
        "RSA -> Ed25519 -> RSA: the third key is trusted through the chain from the only shipped key",
        file_input(licence_file(rsa2)),
        accept(),
        trust=dict(ship_rsa1, published_keys=rotation),
    )
    add(
        "old-key-after-rotation",
        "a licence signed by the shipped key still verifies after two rotations",
        file_input(licence_file(rsa1)),
        accept(),
        trust=dict(ship_rsa1, published_keys=rotation),
    )
    add(
        "offline-root-endorsement",
        "a key endorsed only by the offline root key the application ships",
        file_input(licence_file(rsa2)),
        accept(),
        trust=dict(ship_rsa1, root_keys=[root.shipped()], published_keys={"keys": [rsa2.entry("active", [root.endorse(rsa2)])]}),
    )
    add(
        "v1-file",
        "a version 1 licence file (no envelope)",
        file_input(v1_licence_file(rsa1)),
        refuse("UNSUPPORTED_FORMAT"),
    )
    v1_answer = signed_licence(rsa1, licence(rsa1))
    del v1_answer["envelope"]
    add("v1-activation", "an activation answer without an envelope", activation_input(v1_answer), refuse("UNSUPPORTED_FORMAT"))
    add("not-a-file", "text that is not a licence file", file_input("-----BEGIN LICENSE FILE-----\n!!!\n-----END LICENSE FILE-----\n"), refuse("MALFORMED_ENVELOPE"))
    name = "Ünïcødé ~~~ ??? >>>"
    # A payload whose base64 needs padding and uses the characters the two alphabets disagree on.
    while len(payload_bytes(licence(rsa1, customer={"name": name, "email": None}))) % 3 == 0 or not set("-_") & set(
        b64url_encode(payload_bytes(licence(rsa1, customer={"name": name, "email": None})))
    ):
        name += "?"
    good = signed_licence(rsa1, licence(rsa1, customer={"name": name, "email": None}))
    add(
        "payload-padded",
        "the payload re-encoded with padding",
        activation_input(dict(good, envelope=_reencode(good["envelope"], "padding"))),
        refuse("NON_CANONICAL_ENCODING"),
    )
    add(
        "payload-standard-alphabet",
        "the payload re-encoded in the standard base64 alphabet",
        activation_input(dict(good, envelope=_reencode(good["envelope"], "standard"))),
        refuse("NON_CANONICAL_ENCODING"),
    )
    add(
        "eddsa-over-rsa",
        "alg says EdDSA but key_id names an RSA key",
        activation_input(signed_licence(rsa1, licence(rsa1), alg="EdDSA")),
        refuse("ALG_MISMATCH"),
    )
    add(
        "rs256-over-ed25519",
        "alg says RS256 but key_id names an Ed25519 key",
        activation_input(signed_licence(ed_shipped, licence(ed_shipped), alg="RS256")),
        refuse("ALG_MISMATCH"),
        trust={"shipped_keys": [ed_shipped.shipped()]},
    )
    add(
        "revoked-shipped-key",
        "the key_id names a shipped key the server lists as revoked",
        file_input(licence_file(rsa1)),
        refuse("KEY_REVOKED"),
        trust=dict(ship_rsa1, published_keys={"keys": [rsa2.entry("active", [rsa1.endorse(rsa2)]), rsa1.entry("revoked")]}),
    )
    add(
        "stand-in-server",
        "a stand-in server's key, published without an endorsement",
        file_input(licence_file(stand_in)),
        refuse("UNKNOWN_KEY"),
        trust=dict(ship_rsa1, published_keys={"keys": [stand_in.entry("active")]}),
    )
    add(
        "endorsed-by-unknown",
        "a key endorsed by a key nobody trusts",
        file_input(licence_file(rsa2)),
        refuse("UNKNOWN_KEY"),
        trust=dict(ship_rsa1, published_keys={"keys": [rsa2.entry("active", [stranger.endorse(rsa2)])]}),
    )
    add(
        "endorsed-by-revoked",
        "a key endorsed only by a key the server lists as revoked",
        file_input(licence_file(rsa2)),
        refuse("UNKNOWN_KEY"),
        trust={
            "shipped_keys": [rsa1.shipped(), ed_shipped.shipped()],
            "published_keys": {"keys": [rsa2.entry("active", [rsa1.endorse(rsa2)]), rsa1.entry("revoked")]},
        },
    )
    add(
        "endorsement-loop",
        "two keys endorsing each other, neither endorsed by a trusted key",
        file_input(licence_file(loop_a)),
        refuse("UNKNOWN_KEY"),
        trust=dict(
            ship_rsa1,
            published_keys={"keys": [loop_a.entry("active", [loop_b.endorse(loop_a)]), loop_b.entry("retired", [loop_a.endorse(loop_b)])]},
        ),
    )
    add(
        "endorsement-of-another-key",
        "an endorsement copied from another key (it signs that key's thumbprint)",
        file_input(licence_file(stand_in)),
        refuse("UNKNOWN_KEY"),
        trust=dict(ship_rsa1, published_keys={"keys": [stand_in.entry("active", [dict(rsa1.endorse(rsa2))])]}),
    )
    tampered = signed_licence(rsa1, licence(rsa1))
    forged = payload_bytes(dict(tampered["license"], features=["reports", "sync", "everything"]))
    tampered["envelope"] = dict(tampered["envelope"], payload=b64url_encode(forged))
    del tampered["license"]
    add("tampered-payload", "the payload changed after signing", activation_input(tampered), refuse("INVALID_SIGNATURE"))
    disagree = signed_licence(rsa1, licence(rsa1, file_issued_at=iso(NOW, -60), file_expires_at=iso(NOW, 86400)))
    disagree["license"] = dict(disagree["license"], features=["everything"])
    add(
        "file-license-disagrees",
        "a version 2 file whose license differs from the envelope's payload",
        file_input(_file_with(disagree)),
        refuse("PAYLOAD_MISMATCH"),
    )
    add(
        "payload-names-other-key",
        "the payload's key_id names another key than the envelope",
        activation_input(signed_licence(rsa1, licence(rsa1, key_id=rsa2.key_id))),
        refuse("PAYLOAD_MISMATCH"),
    )
    add(
        "other-machine",
        "a licence file issued to another machine",
        file_input(licence_file(rsa1, machine_fingerprint=OTHER_FINGERPRINT)),
        refuse("FINGERPRINT_MISMATCH"),
    )
    add(
        "other-product",
        "an activation for another product",
        activation_input(signed_licence(rsa1, licence(rsa1, product="POS_CLOUD"))),
        refuse("PRODUCT_MISMATCH"),
    )
    add(
        "clock-behind",
        "the local clock is a day earlier than the signed time",
        file_input(licence_file(rsa1, now=iso(NOW, 86400))),
        refuse("CLOCK_TAMPERED"),
    )
    add(
        "file-expired",
        "a licence file past file_expires_at",
        file_input(licence_file(rsa1, now=iso(NOW, -40 * 86400))),
        refuse("FILE_EXPIRED"),
    )
    add(
        "expired",
        "a licence past expires_at + grace_days",
        activation_input(signed_licence(rsa1, licence(rsa1, expires_at=iso(NOW, -8 * 86400)))),
        refuse("EXPIRED"),
    )
    nonce = "conformance-nonce-0123456789"
    validation = {"kind": "validation", "nonce": nonce, "license_key": LICENSE_KEY}
    add("validation", "a signed validate answer", dict(validation, answer=validation_answer(rsa1, nonce)), accept(None))
    add(
        "validation-ed25519-rotated",
        "a validate answer signed by the endorsed Ed25519 key",
        dict(validation, answer=validation_answer(ed, nonce)),
        accept(None),
        trust=dict(ship_rsa1, published_keys=rotation),
    )
    add(
        "validation-replayed",
        "a validate answer for another nonce",
        dict(validation, answer=validation_answer(rsa1, "another-nonce-0123456789")),
        refuse("NONCE_MISMATCH"),
    )
    add(
        "validation-other-machine",
        "a validate answer about another machine",
        dict(validation, answer=validation_answer(rsa1, nonce, machine_fingerprint=OTHER_FINGERPRINT)),
        refuse("WRONG_SUBJECT"),
    )
    unsigned = validation_answer(rsa1, nonce)
    del unsigned["envelope"]
    add("validation-v1", "a validate answer without an envelope", dict(validation, answer=unsigned), refuse("UNSUPPORTED_FORMAT"))
    forged_answer = validation_answer(rsa1, nonce)
    body = json.loads(base64.urlsafe_b64decode(forged_answer["envelope"]["payload"] + "=="))
    forged_answer["envelope"] = dict(forged_answer["envelope"], payload=b64url_encode(payload_bytes(dict(body, valid=True, status="active", code=None, expires_at=None))))
    add("validation-tampered", "a validate answer whose payload changed", dict(validation, answer=forged_answer), refuse("INVALID_SIGNATURE"))
    for case in cases:
        if case["expect"].get("status") is None:
            case["expect"].pop("status", None)
    return {"format": "licence-server-conformance-v1", "cases": cases}


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(conformance_cases(), out, indent=2, ensure_ascii=False)
        out.write("\n")
