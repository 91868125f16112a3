"""Leases from a relay on an offline network (docs/clients.md, Relay leases): the pool file is signed by the vendor,
the lease by the relay's own Ed25519 key that the pool names. Nothing the relay says is trusted before both
signatures check out."""

from cryptography.hazmat.primitives import serialization

from . import keys as keyring
from .times import seconds_of as _time

RELAY_POOL_LABEL = "RELAY POOL"


def _relay_key(pool):
    """The pool's relay key when it is an Ed25519 SPKI PEM whose key id is the pool's relay_key_id, else None."""
    try:
        key = keyring.PublicKey(serialization.load_pem_public_key(pool["relay_public_key"].encode("ascii")))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return key if key.algorithm == "Ed25519" and key.key_id == pool.get("relay_key_id") else None


class RelayError(Exception):
    """A refused pool or lease; `reason` is a name of docs/test-vectors/relay.json."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason


def verify_relay_pool(pool_file, trusted, revoked_ids, product, now, dearmor):
    """
    (pool, relay key) of a pool file, checked in this order: the armor and its pool object (MALFORMED_POOL_FILE), the
    envelope with the vendor keys `trusted` (SIGNATURE_INVALID, whatever the envelope's own reason), the pool equal to
    the payload (POOL_MISMATCH), its members (MALFORMED_POOL_FILE), the relay key named by its key id
    (WRONG_RELAY_KEY), product (PRODUCT_MISMATCH), expiry (POOL_EXPIRED). Raises RelayError.
    """
    document = dearmor(RELAY_POOL_LABEL, pool_file)
    if not isinstance(document, dict) or not isinstance(document.get("pool"), dict):
        raise RelayError("MALFORMED_POOL_FILE", "not a relay pool file with a pool object")
    try:
        pool, _ = keyring.open_envelope(document.get("envelope"), trusted, revoked_ids)
    except keyring.EnvelopeError as err:
        raise RelayError("SIGNATURE_INVALID", "the pool's envelope is refused (%s): %s" % (err.reason, err)) from None
    if not keyring.same_json(document["pool"], pool):
        raise RelayError("POOL_MISMATCH", "the pool is not exactly the envelope's signed payload")
    expires = _time(pool.get("expires_at"))
    seats = pool.get("seats")
    if (
        not isinstance(pool.get("pool_id"), str)
        or isinstance(seats, bool)
        or not isinstance(seats, (int, float))
        or not isinstance(pool.get("license"), dict)
        or not isinstance(pool["license"].get("machine_fingerprint"), str)
        or expires is None
    ):
        raise RelayError("MALFORMED_POOL_FILE", "the signed pool lacks pool_id, seats, expires_at or license")
    relay_key = _relay_key(pool)
    if relay_key is None:
        raise RelayError("WRONG_RELAY_KEY", "the pool names a relay key whose key id is not relay_key_id")
    if product is not None and pool["license"].get("product") != product:
        raise RelayError("PRODUCT_MISMATCH", "the pool lends %r, not %r" % (pool["license"].get("product"), product))
    if not now < expires:
        raise RelayError("POOL_EXPIRED", "the pool expired at %s" % pool["expires_at"])
    return pool, relay_key


def verify_relay_lease(answer, trusted, revoked_ids, fingerprint, product, now, dearmor):
    """
    (lease, pool) of a `POST /relay/v1/leases` answer: the pool file (verify_relay_pool), then the lease envelope with
    the pool's relay key and no other (SIGNATURE_INVALID), the lease equal to its payload, of that pool and for this
    machine (LEASE_MISMATCH), not expired (LEASE_EXPIRED). The order and names are those of
    docs/test-vectors/relay.json. Raises RelayError.
    """
    if not isinstance(answer, dict):
        raise RelayError("MALFORMED_POOL_FILE", "the relay answered no lease")
    pool, relay_key = verify_relay_pool(answer.get("pool_file"), trusted, revoked_ids, product, now, dearmor)
    # The relay key is the only key a lease may carry: a vendor key, trusted for pools, signs no lease.
    try:
        lease, _ = keyring.open_envelope(answer.get("envelope"), {relay_key.key_id: relay_key}, set())
    except keyring.EnvelopeError as err:
        raise RelayError("SIGNATURE_INVALID", "the lease's envelope is refused (%s): %s" % (err.reason, err)) from None
    if "lease" not in answer or not keyring.same_json(answer["lease"], lease):
        raise RelayError("LEASE_MISMATCH", "the lease is not exactly the envelope's signed payload")
    lease_expires = _time(lease.get("expires_at"))
    interval = lease.get("heartbeat_interval_seconds")
    if (
        not isinstance(lease.get("lease_id"), str)
        or lease_expires is None
        or isinstance(interval, bool)
        or not isinstance(interval, (int, float))
        or interval <= 0
    ):
        raise RelayError("LEASE_MISMATCH", "the lease lacks lease_id, expires_at or heartbeat_interval_seconds")
    if lease.get("pool_id") != pool["pool_id"] or lease.get("machine_fingerprint") != fingerprint:
        raise RelayError("LEASE_MISMATCH", "the lease is for another pool or another machine")
    if not now < lease_expires:
        raise RelayError("LEASE_EXPIRED", "the lease expired at %s" % lease["expires_at"])
    return lease, pool
