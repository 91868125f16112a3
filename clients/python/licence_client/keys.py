"""Public keys, signed envelopes and endorsement chains (docs/clients.md, Envelopes and trusted keys).

A verifier decodes, verifies, then parses: nothing here canonicalizes JSON.
"""

import base64
import hashlib
import json
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

ENDORSEMENT_PREFIX = b"licence-server-endorsement-v1:"
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
# The envelope's `alg` for each key type, and the names `/public-keys` uses.
_ALG_OF = {"RSA-SHA256": "RS256", "Ed25519": "EdDSA"}
ENVELOPE_MEMBERS = ("payload", "alg", "key_id", "signature")


class EnvelopeError(Exception):
    """An envelope or key that does not verify; `reason` is a stable code."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason


def b64url_encode(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    """Strict base64url without padding: the standard alphabet, padding or stray bits are refused."""
    if not isinstance(text, str) or not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url_encode(raw) != text:
        raise ValueError("not the canonical base64url of its bytes")
    return raw


def _int_b64url(value):
    return b64url_encode(value.to_bytes((value.bit_length() + 7) // 8 or 1, "big"))


class PublicKey:
    """An RSA or Ed25519 public key; its `key_id` is always computed from the key, never taken from input."""

    def __init__(self, key):
        if isinstance(key, rsa.RSAPublicKey):
            self.algorithm = "RSA-SHA256"
        elif isinstance(key, ed25519.Ed25519PublicKey):
            self.algorithm = "Ed25519"
        else:
            raise TypeError("only RSA and Ed25519 public keys sign licences")
        self.key = key
        der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        self.key_id = hashlib.sha256(der).hexdigest()[:16]

    @property
    def alg(self):
        return _ALG_OF[self.algorithm]

    def jwk(self):
        """The RFC 7638 required members of this key's JWK."""
        if self.algorithm == "RSA-SHA256":
            numbers = self.key.public_numbers()
            return {"e": _int_b64url(numbers.e), "kty": "RSA", "n": _int_b64url(numbers.n)}
        raw = self.key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"crv": "Ed25519", "kty": "OKP", "x": b64url_encode(raw)}

    def thumbprint(self):
        """RFC 7638: SHA-256 over the required members in lexicographic order, without whitespace."""
        members = self.jwk()
        text = "{" + ",".join('"%s":"%s"' % (name, members[name]) for name in sorted(members)) + "}"
        return hashlib.sha256(text.encode("ascii")).digest()

    def pem(self):
        return self.key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")

    def verify(self, alg, message, signature):
        """True when `signature` is this key's over `message` under `alg`; EnvelopeError when `alg` is not this key's."""
        if alg != self.alg:
            raise EnvelopeError("ALG_MISMATCH", "alg %r does not match key %s (%s)" % (alg, self.key_id, self.algorithm))
        try:
            if self.algorithm == "RSA-SHA256":
                self.key.verify(signature, message, padding.PKCS1v15(), hashes.SHA256())
            else:
                self.key.verify(signature, message)
            return True
        except InvalidSignature:
            return False


def load_key(value):
    """A PEM string, a `/public-keys` entry (`public_key_pem`) or a JWK (RSA or OKP/Ed25519)."""
    if isinstance(value, PublicKey):
        return value
    if isinstance(value, str):
        return PublicKey(serialization.load_pem_public_key(value.encode("ascii")))
    if not isinstance(value, dict):
        raise TypeError("a public key is a PEM string, a /public-keys entry or a JWK")
    if isinstance(value.get("public_key_pem"), str):
        key = load_key(value["public_key_pem"])
    elif value.get("kty") == "RSA":
        n = int.from_bytes(b64url_decode(value["n"]), "big")
        e = int.from_bytes(b64url_decode(value["e"]), "big")
        key = PublicKey(rsa.RSAPublicNumbers(e, n).public_key())
    elif value.get("kty") == "OKP" and value.get("crv") == "Ed25519":
        key = PublicKey(ed25519.Ed25519PublicKey.from_public_bytes(b64url_decode(value["x"])))
    else:
        raise TypeError("unsupported public key")
    claimed = value.get("kid", value.get("key_id"))
    if claimed is not None and claimed != key.key_id:
        raise TypeError("key %r is labelled with another key's id" % key.key_id)
    return key


def key_entries(source):
    """The entries of a `/public-keys` answer, a JWK Set, or a list of keys."""
    if source is None:
        return []
    if isinstance(source, dict):
        source = source.get("keys", [])
    if isinstance(source, (str, PublicKey)):
        return [source]
    return list(source) if isinstance(source, list) else []


def endorsement_message(key):
    return ENDORSEMENT_PREFIX + b64url_encode(key.thumbprint()).encode("ascii")


def trusted_keys(shipped, roots, published, revoked_ids):
    """
    The keys a client trusts to sign: the shipped keys, then every published key endorsed by a trusted key or
    an offline root, repeated until nothing changes (a loop of keys endorsing each other never starts). A key
    in `revoked_ids` is dropped, shipped or not, and endorses nothing.
    """
    trusted = {k.key_id: k for k in shipped if k.key_id not in revoked_ids}
    endorsers = dict(trusted)
    endorsers.update({k.key_id: k for k in roots if k.key_id not in revoked_ids})
    candidates = []
    for entry in published:
        try:
            key = load_key(entry)
        except (TypeError, ValueError, KeyError):
            continue  # a malformed entry is skipped; the others still count
        if key.key_id in revoked_ids or key.key_id in trusted:
            continue
        endorsements = entry.get("endorsements") if isinstance(entry, dict) else None
        candidates.append((key, endorsements if isinstance(endorsements, list) else []))
    changed = True
    while changed:
        changed = False
        for key, endorsements in candidates:
            if key.key_id in trusted:
                continue
            if any(_endorses(endorsers, key, e) for e in endorsements):
                trusted[key.key_id] = key
                endorsers[key.key_id] = key
                changed = True
    return trusted


def distrust_reasons(shipped, roots, published):
    """
    Why each published key that is not trusted is refused (docs/signing.md, Endorsed rotation), keyed by key id:
    `KEY_REVOKED`, `UNENDORSED_KEY` (no endorsement), `INVALID_ENDORSEMENT` (a trusted key's endorsement that does
    not verify), `ENDORSEMENT_LOOP` (untrusted keys endorsing each other), `ENDORSER_REVOKED`, `ENDORSER_UNKNOWN`.
    """
    listed = {}
    for entry in published:
        try:
            key = load_key(entry)
        except (TypeError, ValueError, KeyError):
            continue
        endorsements = entry.get("endorsements") if isinstance(entry, dict) else None
        endorsers = [e.get("key_id") for e in endorsements if isinstance(e, dict)] if isinstance(endorsements, list) else []
        listed[key.key_id] = endorsers
    revoked = revoked_ids_of(published)
    trusted = trusted_keys(shipped, roots, published, revoked)
    anchors = set(trusted) | {k.key_id for k in roots if k.key_id not in revoked}
    reasons = {}
    for key_id, endorsers in listed.items():
        if key_id in trusted:
            continue
        if key_id in revoked:
            reasons[key_id] = "KEY_REVOKED"
        elif not endorsers:
            reasons[key_id] = "UNENDORSED_KEY"
        elif any(e in anchors for e in endorsers):
            reasons[key_id] = "INVALID_ENDORSEMENT"
        elif _leads_back(key_id, listed, anchors):
            reasons[key_id] = "ENDORSEMENT_LOOP"
        elif any(e in revoked for e in endorsers):
            reasons[key_id] = "ENDORSER_REVOKED"
        else:
            reasons[key_id] = "ENDORSER_UNKNOWN"
    return reasons


def _leads_back(start, listed, anchors):
    """Whether following untrusted endorsers from `start` comes back to `start`."""
    seen = set()
    queue = list(listed.get(start, []))
    while queue:
        key_id = queue.pop(0)
        if key_id == start:
            return True
        if key_id in seen or key_id in anchors:
            continue
        seen.add(key_id)
        queue.extend(listed.get(key_id, []))
    return False


def _endorses(endorsers, key, endorsement):
    if not isinstance(endorsement, dict):
        return False
    endorser = endorsers.get(endorsement.get("key_id"))
    if endorser is None or endorser.key_id == key.key_id:
        return False
    try:
        return endorser.verify(endorser.alg, endorsement_message(key), b64url_decode(endorsement.get("signature")))
    except (ValueError, EnvelopeError):
        return False


def revoked_ids_of(published):
    """Key ids a `/public-keys` answer or JWK Set lists with `status: "revoked"`."""
    ids = set()
    for entry in published:
        if isinstance(entry, dict) and entry.get("status") == "revoked":
            try:
                ids.add(load_key(entry).key_id)
            except (TypeError, ValueError, KeyError):
                pass
    return ids


def open_envelope(envelope, trusted, revoked_ids):
    """
    Decodes and verifies `{payload, alg, key_id, signature}`, then parses the payload: the signed bytes are
    exactly the decoded payload. Returns (payload object, key). Raises EnvelopeError with a reason code.
    """
    if not isinstance(envelope, dict) or sorted(envelope) != sorted(ENVELOPE_MEMBERS) or not all(
        isinstance(envelope[name], str) for name in ENVELOPE_MEMBERS
    ):
        raise EnvelopeError("MALFORMED_ENVELOPE", "an envelope has exactly the strings payload, alg, key_id and signature")
    if envelope["alg"] not in ("RS256", "EdDSA"):
        raise EnvelopeError("MALFORMED_ENVELOPE", "unknown alg %r" % envelope["alg"])
    try:
        payload = b64url_decode(envelope["payload"])
        signature = b64url_decode(envelope["signature"])
    except ValueError:
        raise EnvelopeError("NON_CANONICAL_ENCODING", "payload and signature are base64url without padding") from None
    key_id = envelope["key_id"]
    if key_id in revoked_ids:
        raise EnvelopeError("KEY_REVOKED", "signed with key %s, which the server lists as revoked" % key_id)
    key = trusted.get(key_id)
    if key is None:
        raise EnvelopeError("UNKNOWN_KEY", "signed with key %s, which this client does not trust" % key_id)
    if not key.verify(envelope["alg"], payload, signature):
        raise EnvelopeError("INVALID_SIGNATURE", "the signature does not match the payload")
    try:
        value = json.loads(payload.decode("utf-8"))
    except ValueError:
        raise EnvelopeError("MALFORMED_PAYLOAD", "the payload is not UTF-8 JSON") from None
    if not isinstance(value, dict):
        raise EnvelopeError("MALFORMED_PAYLOAD", "the payload is not a JSON object")
    if "key_id" in value and value["key_id"] != key_id:
        raise EnvelopeError("PAYLOAD_MISMATCH", "the payload names key %r, the envelope %s" % (value["key_id"], key_id))
    return value, key


def same_json(a, b):
    """Equality of two parsed JSON values: `true` is not `1`, `1` equals `1.0`, member order does not matter."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
