"""Verify a licence payload without the client library: RFC 8785 (JCS) + RSA-SHA256 with `cryptography`.

    python3 verify_license.py license.json public.pem      # {"license": {...}, "signature": "RSA-SHA256:..."}
    python3 verify_license.py --vectors ../test-vectors/vectors.json
"""
import base64, json, sys
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding


def jcs(value) -> str:
    """RFC 8785 for what the server signs (strings, integers, booleans, null, objects, arrays)."""
    if isinstance(value, dict):  # members sorted by UTF-16 code units, not by code points
        members = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be"))
        return "{" + ",".join(jcs(k) + ":" + jcs(v) for k, v in members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    if isinstance(value, str):  # raw UTF-8; only " \ and U+0000..U+001F escaped, as json.dumps does with ensure_ascii=False
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        raise ValueError("the licence payload has no fractional numbers; parse with json.loads (ints stay exact)")
    return json.dumps(value)  # int, True/False, None


def verify(license: dict, signature: str, public_key_pem: bytes) -> bool:
    if not signature.startswith("RSA-SHA256:"):
        return False
    key = serialization.load_pem_public_key(public_key_pem)
    try:
        key.verify(base64.b64decode(signature[11:], validate=True), jcs(license).encode("utf-8"), padding.PKCS1v15(), hashes.SHA256())
        return True
    except (InvalidSignature, ValueError):
        return False


if __name__ == "__main__":
    if sys.argv[1] == "--vectors":
        doc = json.load(open(sys.argv[2], encoding="utf-8"))
        for v in doc["vectors"]:
            payload = json.loads(v["payload_json"])
            assert jcs(payload).encode("utf-8").hex() == v["canonical_hex"], v["name"] + ": canonical bytes differ"
            assert verify(payload, v["signature"], doc["public_key_pem"].encode()), v["name"] + ": signature does not verify"
        print(f"{len(doc['vectors'])} vectors verified")
    else:
        document = json.load(open(sys.argv[1], encoding="utf-8"))
        ok = verify(document["license"], document["signature"], open(sys.argv[2], "rb").read())
        print("valid" if ok else "invalid")
        sys.exit(0 if ok else 1)
