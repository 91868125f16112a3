"""Leases from a relay on an offline network (docs/clients.md, Relay leases): the pool file is signed by the vendor,
the lease by the relay's own Ed25519 key that the pool names. Nothing the relay says is trusted before both
signatures check out."""

import datetime

from cryptography.hazmat.primitives import serialization

from . import keys as keyring

RELAY_POOL_LABEL = "RELAY POOL"


def _time(value):
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.timestamp()


def _relay_key(pool):
    """The pool's relay key when it is an Ed25519 SPKI PEM whose key id is the pool's relay_key_id, else None."""
    try:
        key = keyring.PublicKey(serialization.load_pem_public_key(pool["relay_public_key"].encode("ascii")))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return key if key.algorithm == "Ed25519" and key.key_id == pool.get("relay_key_id") else None


def verify_relay_lease(answer, trusted, revoked_ids, fingerprint, product, now, dearmor):
    """
    (lease, pool) of a `POST /relay/v1/leases` answer, checked in this order: the pool file's armor, its envelope with
    the vendor keys `trusted` (dict key_id -> PublicKey), the pool equal to the payload, the relay key's id, product,
    the pool's expiry; then the lease envelope with the pool's relay key only, the lease equal to its payload, its
    pool, this machine's fingerprint, the lease's expiry. Raises keys.EnvelopeError with a stable reason
    (clients/conformance-format.md, relay_lease).
    """
    refuse = keyring.EnvelopeError
    if not isinstance(answer, dict):
        raise refuse("MALFORMED_ENVELOPE", "the relay answered no lease")
    document = dearmor(RELAY_POOL_LABEL, answer.get("pool_file"))
    if not isinstance(document, dict) or "pool" not in document or "envelope" not in document:
        raise refuse("MALFORMED_ENVELOPE", "not a relay pool file")
    pool, _ = keyring.open_envelope(document["envelope"], trusted, revoked_ids)
    if not keyring.same_json(document["pool"], pool):
        raise refuse("PAYLOAD_MISMATCH", "the pool differs from the vendor's signed payload")
    relay_key = _relay_key(pool)
    expires = _time(pool.get("expires_at"))
    if relay_key is None or not isinstance(pool.get("pool_id"), str) or not isinstance(pool.get("license"), dict) or expires is None:
        raise refuse("MALFORMED_PAYLOAD", "the pool lacks a relay Ed25519 key that matches relay_key_id")
    if product is not None and pool["license"].get("product") != product:
        raise refuse("PRODUCT_MISMATCH", "the pool lends %r, not %r" % (pool["license"].get("product"), product))
    if not now < expires:
        raise refuse("POOL_EXPIRED", "the pool expired at %s" % pool["expires_at"])

    envelope = answer.get("envelope")
    if isinstance(envelope, dict) and isinstance(envelope.get("key_id"), str) and envelope["key_id"] != relay_key.key_id:
        raise refuse(
            "INVALID_SIGNATURE",
            "the lease is signed by key %s, not by the pool's relay key %s" % (envelope["key_id"], relay_key.key_id),
        )
    # The relay key is the only key a lease may carry: a vendor key, trusted for pools, signs no lease.
    lease, _ = keyring.open_envelope(envelope, {relay_key.key_id: relay_key}, set())
    if not keyring.same_json(answer.get("lease"), lease):
        raise refuse("PAYLOAD_MISMATCH", "the lease differs from the relay's signed payload")
    lease_expires = _time(lease.get("expires_at"))
    interval = lease.get("heartbeat_interval_seconds")
    if (
        not isinstance(lease.get("lease_id"), str)
        or lease_expires is None
        or isinstance(interval, bool)
        or not isinstance(interval, (int, float))
        or interval <= 0
    ):
        raise refuse("MALFORMED_PAYLOAD", "the lease lacks lease_id, expires_at or heartbeat_interval_seconds")
    if lease.get("pool_id") != pool["pool_id"]:
        raise refuse("WRONG_SUBJECT", "the lease is of pool %r, not %s" % (lease.get("pool_id"), pool["pool_id"]))
    if lease.get("machine_fingerprint") != fingerprint:
        raise refuse("FINGERPRINT_MISMATCH", "the lease was made for another machine")
    if not now < lease_expires:
        raise refuse("LEASE_EXPIRED", "the lease expired at %s" % lease["expires_at"])
    return lease, pool
