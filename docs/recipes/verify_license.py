"""Verify a signed envelope without the client library: decode, verify, parse (Python 3 + `cryptography`).

    python3 verify_license.py envelope.json public.pem    # {"payload", "alg", "key_id", "signature"}
    python3 verify_license.py --vectors ../test-vectors/vectors.json
"""
import base64, json, re, sys
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa


def b64url(text: str) -> bytes:
    """Unpadded base64url only: padding, the standard alphabet or another spelling of the same bytes is refused."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != text:
        raise ValueError("not unpadded base64url")
    return raw


def open_envelope(envelope: dict, public_key_pem: bytes) -> dict:
    """The licence (or signed answer) inside the envelope when the key signed it; ValueError otherwise."""
    if sorted(envelope) != ["alg", "key_id", "payload", "signature"]:
        raise ValueError("an envelope has exactly payload, alg, key_id and signature")
    payload, signature = b64url(envelope["payload"]), b64url(envelope["signature"])  # 1. decode
    key = serialization.load_pem_public_key(public_key_pem)
    try:  # 2. verify the bytes as they are: the alg must be the key's
        if envelope["alg"] == "RS256" and isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, payload, padding.PKCS1v15(), hashes.SHA256())
        elif envelope["alg"] == "EdDSA" and isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, payload)
        else:
            raise ValueError("alg %r does not match the key" % envelope["alg"])
    except InvalidSignature:
        raise ValueError("the signature does not verify") from None
    return json.loads(payload.decode("utf-8"))  # 3. parse, only now


# Then check what the licence says: machine_fingerprint, product, expires_at + grace_days, file_expires_at;
# for a signed validate answer, that `nonce`, `license_key` and `machine_fingerprint` are those you sent.

if __name__ == "__main__":
    if sys.argv[1] == "--vectors":
        doc = json.load(open(sys.argv[2], encoding="utf-8"))
        keys = {doc["key_id"]: doc["public_key_pem"], doc["ed25519"]["key_id"]: doc["ed25519"]["public_key_pem"]}
        for v in doc["envelopes"]:
            envelope = v["envelope"]
            assert open_envelope(envelope, keys[envelope["key_id"]].encode()) == json.loads(v["payload_json"]), v["name"]
            for bad in (dict(envelope, payload=envelope["payload"] + "="), dict(envelope, payload=envelope["payload"][:-2]),
                        dict(envelope, alg="RS256" if envelope["alg"] == "EdDSA" else "EdDSA")):
                try:
                    open_envelope(bad, keys[envelope["key_id"]].encode())
                    raise AssertionError(v["name"] + ": a damaged envelope verified")
                except ValueError:
                    pass
        print("%d envelopes verified, damaged ones refused" % len(doc["envelopes"]))
    else:
        print(json.dumps(open_envelope(json.load(open(sys.argv[1])), open(sys.argv[2], "rb").read()), indent=2))
