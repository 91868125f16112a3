"""Runs conformance cases (clients/conformance-format.md) through this client's own code paths.

    /usr/bin/python3 -m licence_client.conformance ../../docs/test-vectors/conformance.json   # exit 1 on a disagreement
    /usr/bin/python3 -m licence_client.conformance ../../docs/test-vectors/relay.json         # the relay's pools and leases

Two shapes of case: the shared list's (`kind` beside `input`: `envelope`, `license_file`, `key_trust`,
`signed_answer`, `trial`, `relay_lease`, keys named
from the document's `keys`), which every official client runs, and scenario cases (`input.kind`: `license_file`,
`activation`, `validation`, with `trust` and `context`), which each client's tests make with fresh keys.
"""

import datetime
import json
import sys
import tempfile
import os

from .client import LicenseClient, NetworkError
from . import keys as keyring
from .errors import VerificationError


def _refuse_network(method, url, body, headers, timeout):
    raise NetworkError("conformance cases run offline")


def _parse_now(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _offline_client(folder, now, shipped=None, roots=None, fingerprint="conformance", product=None):
    return LicenseClient(
        server_url="http://127.0.0.1:9/",
        state_path=os.path.join(folder, "state.json"),
        app_salt="conformance",
        public_keys=shipped,
        root_keys=roots,
        product=product,
        fingerprint=fingerprint,
        now=lambda: now,
        transport=_refuse_network,
        retries=0,
    )


def run_shared_case(case, named_keys):
    """(verdict, reason, None) of a case of the shared list (docs/test-vectors/conformance.json)."""
    data = case["input"]
    if case["kind"] == "key_trust":
        shipped = [keyring.load_key(named_keys[name]) for name in data["shipped_keys"]]
        roots = [keyring.load_key(named_keys[name]) for name in data.get("root_keys", [])]
        reasons = keyring.distrust_reasons(shipped, roots, data["published"])
        revoked = keyring.revoked_ids_of(data["published"])
        trusted = keyring.trusted_keys(shipped, roots, data["published"], revoked)
        key_id = data["key_id"]
        if key_id in trusted:
            return "trusted", None, None
        return "refused", reasons.get(key_id, "UNKNOWN_KEY"), None
    shipped = [named_keys[name] for name in data.get("trusted_keys", [])]
    if case["kind"] == "relay_lease":
        return _run_relay_case(data, shipped)
    if case["kind"] in ("signed_answer", "trial"):
        return _run_client_case(case["kind"], data, shipped)
    state = {"revoked_key_ids": list(data.get("revoked_keys", []))}
    with tempfile.TemporaryDirectory(prefix="licence-conformance-") as folder:
        client = _offline_client(folder, 0, shipped)
        try:
            if case["kind"] == "envelope":
                client._open(data["envelope"], state)
            elif case["kind"] == "license_file":
                client._open_license_file(data["license_file"], state)
            else:
                raise ValueError("unknown case kind %r" % case["kind"])
        except VerificationError as err:
            return "refuse", err.reason, None
    return "accept", None, None


def _run_client_case(kind, data, shipped):
    """A signed answer (validate, update check) or a trial answer, through the client's own paths."""
    now = _parse_now(data["now"]) if "now" in data else 0
    with tempfile.TemporaryDirectory(prefix="licence-conformance-") as folder:
        client = _offline_client(folder, now, shipped, None, data["machine_fingerprint"], data.get("product"))
        try:
            if kind == "signed_answer":
                seat = {"license_key": data["license_key"], "machine_fingerprint": data["machine_fingerprint"]}
                client.verify_answer(data["answer"], data["nonce"], seat)
                return "accept", None, None
            client.store_activation(data["answer"])
            result = client.check()
        except VerificationError as err:
            return "refuse", err.reason, None
        if result.ok:
            return "accept", None, result.status
        return "refuse", result.reason, None


def _run_relay_case(data, shipped):
    """A relay's lease answer, verified as lease_from_relay() does (clients/conformance-format.md, relay_lease)."""
    with tempfile.TemporaryDirectory(prefix="licence-conformance-") as folder:
        client = _offline_client(
            folder, _parse_now(data["now"]), shipped, None, data["machine_fingerprint"], data.get("product")
        )
        try:
            client.verify_relay_answer(data["answer"], {"revoked_key_ids": list(data.get("revoked_keys", []))})
        except VerificationError as err:
            return "refuse", err.reason, None
    return "accept", None, None


def run_case(case, named_keys=None):
    """(verdict, reason, status) of one case: verdict "accept" or "refuse" ("trusted" or "refused" for key_trust)."""
    if "kind" in case:
        return run_shared_case(case, named_keys or {})
    trust = case.get("trust", {})
    context = case.get("context", {})
    data = case["input"]
    now = _parse_now(context["now"])
    with tempfile.TemporaryDirectory(prefix="licence-conformance-") as folder:
        client = _offline_client(
            folder, now, trust.get("shipped_keys"), trust.get("root_keys"), context["machine_fingerprint"], context.get("product")
        )
        if trust.get("published_keys") is not None:
            client.learn_keys(trust["published_keys"].get("keys", []))
        try:
            if data["kind"] == "license_file":
                result = client.import_license_file(data["text"])
            elif data["kind"] == "activation":
                client.store_activation(data["answer"])
                result = client.check()
            elif data["kind"] == "validation":
                seat = {"license_key": data["license_key"], "machine_fingerprint": context["machine_fingerprint"]}
                client.verify_answer(data["answer"], data["nonce"], seat)
                return "accept", None, None
            else:
                raise ValueError("unknown input kind %r" % data["kind"])
        except VerificationError as err:
            return "refuse", err.reason, None
        if result.ok:
            return "accept", None, result.status
        return "refuse", result.reason, None


def run_relay_vectors(document):
    """Runs docs/test-vectors/relay.json (pools, then lease answers, at its `now` with its vendor keys); returns the
    disagreements."""
    failures = []
    shipped = keyring.key_entries(document["vendor_jwks"])
    now = _parse_now(document["now"])
    with tempfile.TemporaryDirectory(prefix="licence-conformance-") as folder:
        for kind, cases in (("pool", document["pools"]), ("lease", document["leases"])):
            for case in cases:
                client = _offline_client(folder, now, shipped, None, case.get("machine_fingerprint", "conformance"))
                try:
                    if kind == "pool":
                        client.verify_relay_pool(case["pool_file"], {})
                    else:
                        client.verify_relay_answer(case["answer"], {})
                    got = ("accept", None)
                except VerificationError as err:
                    got = ("refuse", err.reason)
                wanted = (case["expect"]["verdict"], case["expect"].get("reason"))
                if got != wanted:
                    failures.append("%s %s: expected %s %s, got %s %s" % (kind, case["name"], wanted[0], wanted[1] or "", got[0], got[1] or ""))
    return failures


def run_cases(source):
    """Runs every case of a list (a path, or the parsed document); returns the list of disagreements."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "r", encoding="utf-8") as handle:
            source = json.load(handle)
    if "pools" in source:
        return run_relay_vectors(source)
    failures = []
    for case in source["cases"]:
        expect = case["expect"]
        verdict, reason, status = run_case(case, source.get("keys"))
        wanted = (expect["verdict"], expect.get("reason"))
        if (verdict, reason) != wanted or ("status" in expect and status != expect["status"]):
            failures.append("%s: expected %s %s%s, got %s %s%s" % (
                case["name"], wanted[0], wanted[1] or "", " " + expect["status"] if "status" in expect else "",
                verdict, reason or "", " " + status if status else ""))
    return failures


def main(argv):
    if len(argv) != 2:
        print("usage: python3 -m licence_client.conformance CASES.json", file=sys.stderr)
        return 2
    with open(argv[1], "r", encoding="utf-8") as handle:
        document = json.load(handle)
    failures = run_cases(document)
    for failure in failures:
        print("FAIL " + failure)
    total = len(document["pools"]) + len(document["leases"]) if "pools" in document else len(document["cases"])
    print("%d of %d conformance cases pass" % (total - len(failures), total))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
