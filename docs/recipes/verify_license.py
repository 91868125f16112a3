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


def verify_validate_answer(answer_text: str, nonce: str, license_key: str, fingerprint: str, public_key_pem: bytes) -> dict:
    """A signed /validate answer (sent with `nonce`): signed are the JCS bytes of the answer without `signature`.
    Returns the answer when it verifies and is the answer to this request, else raises ValueError."""
    answer = json.loads(answer_text)
    signed = {k: v for k, v in answer.items() if k != "signature"}
    if not verify(signed, answer.get("signature", ""), public_key_pem):
        raise ValueError("the signature does not verify")
    if answer["nonce"] != nonce:
        raise ValueError("not the answer to this request (replayed?)")
    if answer["license_key"] != license_key or answer["machine_fingerprint"] != fingerprint:
        raise ValueError("the answer is about another licence or machine")
    return answer  # answer["valid"], answer["code"] are now a verdict


if __name__ == "__main__":
    if sys.argv[1] == "--vectors":
        doc = json.load(open(sys.argv[2], encoding="utf-8"))
        for v in doc["vectors"]:
            payload = json.loads(v["payload_json"])
            assert jcs(payload).encode("utf-8").hex() == v["canonical_hex"], v["name"] + ": canonical bytes differ"
            assert verify(payload, v["signature"], doc["public_key_pem"].encode()), v["name"] + ": signature does not verify"
        for a in doc["validate_answers"]:
            answer = json.loads(a["answer_json"])
            signed = {k: v for k, v in answer.items() if k != "signature"}
            assert jcs(signed).encode("utf-8").hex() == a["canonical_hex"], a["name"] + ": canonical bytes differ"
            pem = doc["public_key_pem"].encode()
            verified = verify_validate_answer(a["answer_json"], a["nonce"], a["license_key"], a["machine_fingerprint"], pem)
            assert verified["valid"] == answer["valid"], a["name"]
            flipped = a["answer_json"].replace('"valid":true', '"valid":X').replace('"valid":false', '"valid":true').replace('"valid":X', '"valid":false')
            for text, sent_nonce in [(flipped, a["nonce"]), (a["answer_json"], "another-nonce-0000")]:
                try:
                    verify_validate_answer(text, sent_nonce, a["license_key"], a["machine_fingerprint"], pem)
                    raise AssertionError(a["name"] + ": a changed verdict or another nonce was accepted")
                except ValueError:
                    pass
        print(f"{len(doc['vectors'])} vectors and {len(doc['validate_answers'])} validate answers verified")
    else:
        document = json.load(open(sys.argv[1], encoding="utf-8"))
        ok = verify(document["license"], document["signature"], open(sys.argv[2], "rb").read())
        print("valid" if ok else "invalid")
        sys.exit(0 if ok else 1)
