"""The licence server's client: online calls, licence files and an offline check, with its state in one file."""

import base64
import binascii
import datetime
import hashlib
import json
import os as _os
import platform
import random
import re
import secrets
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Optional

from . import keys as keyring
from . import relay
from .errors import LicenseServerError, NetworkError, VerificationError
from .state import StateFile
from .times import seconds_of as _time

FINGERPRINT_PATTERN = re.compile(r"sha256:[0-9a-f]{64}")
LICENSE_FILE_LABEL = "LICENSE FILE"
ACTIVATION_REQUEST_LABEL = "ACTIVATION REQUEST"
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_RETRYABLE_STATUS = {429, 502, 503, 504}
_SEAT_GONE = {"NOT_ACTIVATED", "INVALID_KEY"}
_DAY = 86400.0


@dataclass
class CheckResult:
    """`ok` with `status` ("active" | "grace") and the licence, or not `ok` with a `reason` code and a message."""

    ok: bool
    reason: Optional[str] = None
    message: str = ""
    status: Optional[str] = None
    license: Optional[dict] = None
    source: Optional[str] = None  # "license_file" | "activation"
    expires_at: Optional[datetime.datetime] = None
    grace_ends_at: Optional[datetime.datetime] = None
    file_expires_at: Optional[datetime.datetime] = None


@dataclass
class Response:
    status: int
    headers: dict = field(default_factory=dict)
    body: bytes = b""


def urllib_transport(method, url, body, headers, timeout):
    """The default transport (standard library). A test or an application may pass its own with this signature."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return Response(answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read())
    except urllib.error.HTTPError as err:
        return Response(err.code, {k.lower(): v for k, v in err.headers.items()}, err.read())
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise NetworkError("%s %s: %s" % (method, url, getattr(err, "reason", err))) from err


def armor(label, value):
    text = base64.b64encode(json.dumps(value, separators=(",", ":")).encode("utf-8")).decode("ascii")
    lines = [text[i : i + 64] for i in range(0, len(text), 64)]
    return "\n".join(["-----BEGIN %s-----" % label, *lines, "-----END %s-----" % label, ""])


def dearmor(label, text):
    """The JSON inside an armor (markers, base64 lines), or None when any part is wrong."""
    if not isinstance(text, str) or len(text) > 256 * 1024:
        return None
    lines = [line.strip() for line in text.lstrip("\ufeff").splitlines() if line.strip()]
    if len(lines) < 3 or lines[0] != "-----BEGIN %s-----" % label or lines[-1] != "-----END %s-----" % label:
        return None
    body = "".join(lines[1:-1])
    if not _BASE64.fullmatch(body):
        return None
    try:
        return json.loads(base64.b64decode(body).decode("utf-8"))
    except (ValueError, binascii.Error):
        return None


def machine_id():
    """The OS's stable id of this installation; the host name when none can be read."""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(path, "r", encoding="ascii") as handle:
                value = handle.read().strip()
            if value:
                return value
        except OSError:
            pass
    try:
        if platform.system() == "Darwin":
            import subprocess

            out = subprocess.run(
                ["ioreg", "-rd1", "-c", "IOPlatformExpertDevice"], capture_output=True, text=True, timeout=5
            ).stdout
            match = re.search(r'"IOPlatformUUID"\s*=\s*"([^"]+)"', out)
            if match:
                return match.group(1)
        elif platform.system() == "Windows":
            import winreg  # type: ignore

            with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"SOFTWARE\Microsoft\Cryptography") as key:
                return winreg.QueryValueEx(key, "MachineGuid")[0]
    except Exception:  # noqa: BLE001 - any failure falls back to the host name
        pass
    return "hostname:" + socket.gethostname()


def _node_platform():
    """This machine's OS in Node's names, as releases name platforms."""
    system = platform.system().lower()
    return {"windows": "win32", "darwin": "darwin"}.get(system, "linux")


def _node_arch():
    """This machine's architecture in Node's names (x64, arm64)."""
    machine = platform.machine().lower()
    return {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)


def default_fingerprint(app_salt, identity=None):
    """SHA-256 of the machine id and the application salt: the raw id never leaves the machine."""
    value = "%s\0%s" % (app_salt, identity if identity is not None else machine_id())
    return "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()


def _iso(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"
    )


def _later(stored, candidate):
    values = [v for v in (_time(stored), candidate) if v is not None]
    return _iso(max(values)) if values else stored


def signed_time_of(license):
    times = [_time(license.get(name)) for name in ("signed_at", "file_issued_at", "activated_at")]
    times = [t for t in times if t is not None]
    return max(times) if times else None


def _utc(seconds):
    return None if seconds is None else datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)


class _Loop:
    """A daemon thread running `self._run(*args)` until `stop()`; `join()` waits for it."""

    def __init__(self, name, *args):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=args, name=name, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()

    def join(self, timeout=None):
        self._thread.join(timeout)

    @property
    def stopped(self):
        return not self._thread.is_alive()


class HeartbeatLoop(_Loop):
    """A background thread beating until `stop()`; `join()` waits for it."""

    def __init__(self, client, on_beat, on_error, on_seat_lost, fallback_interval_seconds):
        super().__init__("licence-heartbeat", client, on_beat, on_error, on_seat_lost, fallback_interval_seconds)

    def _run(self, client, on_beat, on_error, on_seat_lost, fallback):
        failures, deadline, wait = 0, None, 0.0
        while not self._stop.wait(wait):
            try:
                answer = client.heartbeat()
            except LicenseServerError as err:
                if err.code in _SEAT_GONE:
                    if on_seat_lost:
                        on_seat_lost(err)
                    return
                failures, wait = failures + 1, self._backoff(failures + 1, deadline)
                if on_error:
                    on_error(err)
                continue
            except Exception as err:  # noqa: BLE001 - the loop survives any failure of one beat
                failures, wait = failures + 1, self._backoff(failures + 1, deadline)
                if on_error:
                    on_error(err)
                continue
            failures = 0
            if on_beat:
                on_beat(answer)
            timeout = answer.get("heartbeat_timeout_seconds")
            interval = timeout / 3 if timeout else fallback
            deadline = _time(answer.get("next_heartbeat_before"))
            wait = interval * (0.9 + random.random() * 0.2)

    @staticmethod
    def _backoff(failures, deadline):
        backoff = min(2.0**failures, 300.0)
        if deadline is not None:
            backoff = min(backoff, max((deadline - time.time() - 1) / 2, 1.0))
        return backoff * (0.9 + random.random() * 0.2)


class RelaySeat:
    """A seat leased from a relay, verified (docs/clients.md, Relay leases): `lease`, `pool` (its `license` is the
    vendor-signed licence), `heartbeat()` every `lease["heartbeat_interval_seconds"]` (or `start_heartbeat()`), and
    `release()`."""

    def __init__(self, client, relay_url, answer, verified):
        self._client = client
        self.relay_url = relay_url
        self._pool_file = answer["pool_file"]
        self.lease, self.pool = verified

    @property
    def expires_at(self):
        return _time(self.lease["expires_at"])

    def _call(self, path, idempotent):
        body = {"machine_fingerprint": self._client.fingerprint()}
        return self._client._request("POST", path, body, idempotent=idempotent, base_url=self.relay_url)

    def heartbeat(self):
        """Renews the lease; the answer is verified like the first. NOT_ACTIVATED (LicenseServerError): the seat is gone."""
        answer = self._call("/relay/v1/leases/heartbeat", True)
        if isinstance(answer, dict) and "pool_file" not in answer:
            answer = dict(answer, pool_file=self._pool_file)
        self.lease, self.pool = self._client.verify_relay_answer(answer)
        self._pool_file = answer["pool_file"]
        return self.lease

    def release(self):
        """Gives the seat back to the pool (sent once: a repeat answers NOT_ACTIVATED)."""
        return self._call("/relay/v1/leases/release", False)

    def start_heartbeat(self, on_beat=None, on_error=None, on_lease_lost=None):
        """Heartbeats in a thread every `heartbeat_interval_seconds` (with jitter), retrying failures sooner."""
        return RelayHeartbeatLoop(self, on_beat, on_error, on_lease_lost)


class RelayHeartbeatLoop(_Loop):
    """A background thread renewing a relay lease until `stop()` or the seat is gone; `join()` waits for it."""

    def __init__(self, seat, on_beat, on_error, on_lease_lost):
        super().__init__("licence-relay-heartbeat", seat, on_beat, on_error, on_lease_lost)

    def _run(self, seat, on_beat, on_error, on_lease_lost):
        failures = 0
        while True:
            interval = float(seat.lease["heartbeat_interval_seconds"])
            wait = interval if failures == 0 else min(2.0**failures, interval)
            if self._stop.wait(wait * (0.9 + random.random() * 0.2)):
                return
            try:
                lease = seat.heartbeat()
            except LicenseServerError as err:
                if err.code in _SEAT_GONE:
                    if on_lease_lost:
                        on_lease_lost(err)
                    return
                failures += 1
                if on_error:
                    on_error(err)
                continue
            except Exception as err:  # noqa: BLE001 - the loop survives any failure of one beat
                failures += 1
                if on_error:
                    on_error(err)
                continue
            failures = 0
            if on_beat:
                on_beat(lease)


class LicenseClient:
    """
    Online calls (activate, validate, usage, heartbeat, licence file, deactivate), air-gapped activation and an
    offline `check()`. Answers are accepted only as signed envelopes, verified against the keys the
    application ships and the keys they endorse (docs/clients.md, Envelopes and trusted keys).
    """

    def __init__(
        self,
        server_url,
        state_path,
        app_salt,
        public_keys=None,
        root_keys=None,
        pin_to_shipped_keys=False,
        product=None,
        fingerprint=None,
        clock_tolerance_seconds=300,
        max_offline_days=None,
        key_refresh_interval_seconds=3600,
        timeout=10.0,
        retries=2,
        now=None,
        transport=None,
    ):
        if not app_salt:
            raise TypeError("app_salt is required")
        self.server_url = server_url
        self.app_salt = app_salt
        self.product = product
        self.clock_tolerance_seconds = clock_tolerance_seconds
        self.max_offline_days = max_offline_days
        self.key_refresh_interval_seconds = key_refresh_interval_seconds
        self.timeout = timeout
        self.retries = retries
        self._now = now or time.time
        self._transport = transport or urllib_transport
        self._shipped = [keyring.load_key(k) for k in keyring.key_entries(public_keys)]
        self._roots = [keyring.load_key(k) for k in keyring.key_entries(root_keys)]
        # Endorsed rotations are followed by default, as in every official client (docs/clients.md, Trust).
        self._pinned = bool(pin_to_shipped_keys)
        if not self._shipped:
            raise TypeError("public_keys is required: ship the server's public key(s) with the application")
        self._store = StateFile(state_path, app_salt)
        # The folder exists (made 0700) and is writable before any call binds a seat (docs/clients.md, The state file).
        self._store.prepare()
        self._fingerprint_option = fingerprint
        self._fingerprint = None
        self._lock = threading.RLock()

    # ---- identity -------------------------------------------------------------------------------------------

    def fingerprint(self):
        """This machine's fingerprint: the option (a string or a function), or SHA-256 of the machine id and salt."""
        if self._fingerprint is None:
            given = self._fingerprint_option
            value = given() if callable(given) else (given or default_fingerprint(self.app_salt))
            if not isinstance(value, str) or not FINGERPRINT_PATTERN.fullmatch(value):
                raise TypeError('a fingerprint is "sha256:" followed by 64 lower-case hex digits')
            self._fingerprint = value
        return self._fingerprint

    # ---- online calls ---------------------------------------------------------------------------------------

    def activate(self, license_key, hostname=None, os=None, app_version=None):
        """Binds this machine's seat and stores the verified licence; returns the licence (the envelope's payload)."""
        self._store.prepare()
        body = self._activation_body(license_key, hostname, os, app_version)
        self._refresh_keys_if_due()
        answer = self._request("POST", "/api/v1/activate", body, idempotent=True)
        license = self._store_activation(answer)
        return license

    def start_trial(self, hostname=None, os=None, app_version=None, customer_email=None):
        """Starts the product's self-service trial on this machine (docs/client-api.md, Trials): the signed trial
        licence is verified and kept like an activation. Needs `product`. One trial per product and machine, ever:
        a second raises LicenseServerError TRIAL_ALREADY_USED; a product without trials TRIALS_DISABLED. Never
        retried: a retry after a lost answer would meet TRIAL_ALREADY_USED."""
        if not self.product:
            raise TypeError("start_trial() needs the product option")
        self._store.prepare()
        body = self._machine_body(hostname, os, app_version)
        body["product"] = self.product
        if customer_email:
            body["customer_email"] = customer_email
        self._refresh_keys_if_due()
        answer = self._request("POST", "/api/v1/trials", body, idempotent=False)
        return self._store_activation(answer)

    def deactivate(self):
        """Frees the seat (never retried: limits count it) and clears the stored licence."""
        answer = self._request("POST", "/api/v1/deactivate", self._seat_body(), idempotent=False)

        def change(state):
            for name in ("activation", "license_file", "last_validation", "seat_seen_at", "seat_lost"):
                state.pop(name, None)

        self._update(change)
        return answer

    def validate(self):
        """Online check with a fresh nonce; the signed answer is verified and remembered for `check()`."""
        self._refresh_keys_if_due()
        seat = self._seat_body()
        nonce = secrets.token_urlsafe(24)
        answer = self._request("POST", "/api/v1/validate", dict(seat, nonce=nonce, envelope=True), idempotent=True)
        signed = self.verify_answer(answer, nonce, seat, "validation")

        def change(state):
            state["last_validation"] = {
                "valid": signed.get("valid"),
                "status": signed.get("status"),
                "code": signed.get("code"),
                "checked_at": signed.get("checked_at"),
            }
            state["latest_signed_at"] = _later(state.get("latest_signed_at"), _time(signed.get("checked_at")))

        self._update(change)
        return signed

    def usage(self, increment=1, idempotency_key=None):
        """Counts uses of a metered licence; one idempotency key per call, so a retry counts once."""
        self._refresh_keys_if_due()
        seat = self._seat_body()
        nonce = secrets.token_urlsafe(24)
        body = dict(
            seat, increment=increment, idempotency_key=idempotency_key or secrets.token_urlsafe(24), nonce=nonce, envelope=True
        )
        answer = self._request("POST", "/api/v1/usage", body, idempotent=True)
        signed = self.verify_answer(answer, nonce, seat, "usage")
        self._update(
            lambda state: state.update(latest_signed_at=_later(state.get("latest_signed_at"), _time(signed.get("checked_at"))))
        )
        return signed

    def check_for_update(self, current_version, channel=None, platform_name=None, arch=None):
        """Asks for an update (docs/releases.md): the newest release above `current_version` this licence may
        download, on the channel (stable by default) or a more stable one, with an artifact for the platform (Node's
        names: linux, darwin, win32; x64, arm64; default this machine's). Verified like a validate answer (key,
        signature, nonce, licence, machine); the payload's `update` is None when there is none."""
        self._refresh_keys_if_due()
        seat = self._seat_body()
        nonce = secrets.token_urlsafe(24)
        body = dict(seat, platform=platform_name or _node_platform(), arch=arch or _node_arch(), current_version=current_version, nonce=nonce, envelope=True)
        if self.product:
            body["product"] = self.product
        if channel:
            body["channel"] = channel
        answer = self._request("POST", "/api/v1/releases/check", body, idempotent=True)
        signed = self.verify_answer(answer, nonce, seat, "update check")
        self._update(
            lambda state: state.update(latest_signed_at=_later(state.get("latest_signed_at"), _time(signed.get("checked_at"))))
        )
        return signed

    def download_update(self, artifact, target):
        """Streams an artifact of a verified update to `target`, checking its signed size, SHA-256 and SHA-512 on the
        way; on a mismatch the file is removed and VerificationError DIGEST_MISMATCH raised."""
        partial = _os.path.join(_os.path.dirname(_os.path.abspath(target)), ".%s.part" % secrets.token_hex(6))
        sha256, sha512, size = hashlib.sha256(), hashlib.sha512(), 0
        try:
            with urllib.request.urlopen(artifact["url"], timeout=self.timeout) as answer, open(partial, "wb") as out:
                if answer.status != 200:
                    raise NetworkError("download %s: answer %d" % (artifact["filename"], answer.status))
                while True:
                    chunk = answer.read(64 * 1024)
                    if not chunk:
                        break
                    sha256.update(chunk)
                    sha512.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
            if size != artifact["size"] or sha256.hexdigest() != artifact["sha256"] or sha512.hexdigest() != artifact["sha512"]:
                raise VerificationError("DIGEST_MISMATCH", "the downloaded %s is not the signed release's file" % artifact["filename"])
            _os.replace(partial, target)
            return target
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise NetworkError("download %s: %s" % (artifact.get("filename"), err)) from err
        finally:
            if _os.path.exists(partial):
                _os.remove(partial)

    def heartbeat(self):
        """One heartbeat: a success is the seat's last sign of life, NOT_ACTIVATED marks the seat lost for `check()`."""
        seat = self._seat_body()
        sent_at = self._now()
        try:
            answer = self._request("POST", "/api/v1/heartbeat", seat, idempotent=True)
        except LicenseServerError as err:
            if err.code in _SEAT_GONE:
                self._update(lambda state: state.update(seat_lost={"code": err.code, "at": _iso(self._now())}))
            raise
        if answer.get("valid"):
            self._update(lambda state: state.update(seat_seen_at=_later(state.get("seat_seen_at"), sent_at)))
        return answer

    def start_heartbeat(self, on_beat=None, on_error=None, on_seat_lost=None, fallback_interval_seconds=900):
        """Heartbeats in a thread, a third of the timeout apart with jitter, backing off after failures."""
        return HeartbeatLoop(self, on_beat, on_error, on_seat_lost, fallback_interval_seconds)

    # ---- relay leases (docs/clients.md, Relay leases) ----------------------------------------------------------

    def lease_from_relay(self, relay_url, hostname=None):
        """Leases a seat from a relay on the customer's network and returns a RelaySeat. The answer is verified
        first: the pool file with the vendor keys this client trusts (shipped, or endorsed by them), the pool equal
        to its signed payload, for this product and not expired; then the lease with the pool's relay key only, for
        this machine and not expired. A forged pool or a lease signed by any other key raises VerificationError
        SIGNATURE_INVALID (the other reasons: docs/clients.md, Relay leases). Asking again from the same machine renews the same lease."""
        body = {"machine_fingerprint": self.fingerprint(), "hostname": hostname or socket.gethostname()}
        answer = self._request("POST", "/relay/v1/leases", body, idempotent=True, base_url=relay_url)
        return RelaySeat(self, relay_url, answer, self.verify_relay_answer(answer))

    def verify_relay_answer(self, answer, state=None):
        """(lease, pool) of a relay's lease answer, verified with the vendor keys trusted now; VerificationError otherwise."""
        if state is None:
            pool_file = dearmor(relay.RELAY_POOL_LABEL, answer.get("pool_file") if isinstance(answer, dict) else None)
            envelope = pool_file.get("envelope") if isinstance(pool_file, dict) else None
            state = self._keys_for(envelope) if isinstance(envelope, dict) else self._store.load()[1]
        revoked = set(state.get("revoked_key_ids", []))
        try:
            return relay.verify_relay_lease(
                answer, self._trusted(state), revoked, self.fingerprint(), self.product, self._now(), dearmor
            )
        except relay.RelayError as err:
            raise VerificationError(err.reason, str(err)) from None

    def verify_relay_pool(self, pool_file, state=None):
        """The pool of a relay pool file, verified with the vendor keys trusted now; VerificationError otherwise."""
        state = state if state is not None else self._store.load()[1]
        try:
            return relay.verify_relay_pool(
                pool_file, self._trusted(state), set(state.get("revoked_key_ids", [])), self.product, self._now(), dearmor
            )[0]
        except relay.RelayError as err:
            raise VerificationError(err.reason, str(err)) from None

    def license_file(self):
        """Fetches, verifies and stores a licence file for offline use; returns the server's answer."""
        self._refresh_keys_if_due()
        answer = self._request("POST", "/api/v1/license-file", dict(self._seat_body(), envelope=True), idempotent=True)
        self._store_license_file(answer.get("license_file"))
        return answer

    def create_activation_request(self, license_key, hostname=None, os=None, app_version=None):
        """The text an air-gapped machine hands to staff (dashboard or admin API)."""
        return armor(ACTIVATION_REQUEST_LABEL, self._activation_body(license_key, hostname, os, app_version))

    def import_license_file(self, text):
        """Verifies and stores a licence file (e.g. the answer to an activation request), then checks offline."""
        self._store_license_file(text)
        return self.check()

    def refresh_keys(self):
        """Fetches `/api/v1/public-keys`; endorsed keys become trusted, revoked ones are dropped for good."""
        answer = self._request("GET", "/api/v1/public-keys", None, idempotent=True)
        entries = keyring.key_entries(answer)
        if not entries:
            raise VerificationError("NO_KEYS", "the server published no public key")
        self.learn_keys(entries)
        return sorted(self._trusted(self._store.load()[1]))

    def learn_keys(self, entries):
        """Stores a published key list (replacing the last one) and remembers every key it lists as revoked."""
        revoked = keyring.revoked_ids_of(entries)

        def change(state):
            state["server_keys"] = [e for e in entries if isinstance(e, dict)]
            state["revoked_key_ids"] = sorted(set(state.get("revoked_key_ids", [])) | revoked)
            state["server_keys_fetched_at"] = _iso(self._now())

        self._update(change)

    # ---- offline --------------------------------------------------------------------------------------------

    def check(self):
        """The offline decision from the stored state; never raises, never goes online."""
        kind, state = self._store.load()
        if kind == "corrupt":
            return CheckResult(False, "STATE_CORRUPT", "the state file is unreadable; activate again")
        if kind == "tampered":
            return CheckResult(False, "STATE_TAMPERED", "the state file was changed outside the client")
        try:
            return self._check(state)
        except Exception as err:  # noqa: BLE001 - check() answers with a reason, never an exception
            return CheckResult(False, "STATE_CORRUPT", "the stored licence cannot be read: %s" % err)

    def _check(self, state):
        now = self._now()
        try:
            source, license = self._stored_license(state)
        except VerificationError as err:
            return CheckResult(False, err.reason, str(err))
        if license is None:
            return CheckResult(False, "NO_LICENSE", "no licence is stored on this machine")

        def refuse(reason, message):
            return CheckResult(False, reason, message, license=license)

        if license.get("machine_fingerprint") != self.fingerprint():
            return refuse("FINGERPRINT_MISMATCH", "the licence was issued to another machine")
        if self.product is not None and license.get("product") != self.product:
            return refuse("PRODUCT_MISMATCH", "the licence is for product %s" % license.get("product"))

        latest = max([t for t in (signed_time_of(license), _time(state.get("latest_signed_at"))) if t is not None] or [0])
        if now < latest - self.clock_tolerance_seconds:
            return refuse("CLOCK_TAMPERED", "the local clock is earlier than a time the server signed (%s)" % _iso(latest))

        validation = state.get("last_validation")
        if validation and not validation.get("valid") and (_time(validation.get("checked_at")) or 0) >= (
            signed_time_of(license) or 0
        ):
            return refuse(
                "INVALIDATED",
                "the server answered %s at %s" % (validation.get("code") or validation.get("status"), validation.get("checked_at")),
            )

        policy = license.get("policy") if isinstance(license.get("policy"), dict) else {}
        timeout = policy.get("heartbeat_timeout_seconds")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
            seen = max([t for t in (_time(state.get("seat_seen_at")), _time(license.get("activated_at"))) if t is not None] or [0])
            lost = state.get("seat_lost")
            if lost and (_time(lost.get("at")) or 0) >= seen:
                return refuse("SEAT_LOST", "the server answered %s to a heartbeat: the seat was released" % lost.get("code"))
            if now - seen > timeout:
                return refuse("HEARTBEAT_OVERDUE", "no successful heartbeat for more than %s s" % timeout)

        file_expires_at = _time(license.get("file_expires_at"))
        if source == "license_file" and (file_expires_at is None or now > file_expires_at):
            return refuse("FILE_EXPIRED", "the licence file expired at %s; fetch a new one" % license.get("file_expires_at"))
        if self.max_offline_days is not None and now - latest > self.max_offline_days * _DAY:
            return refuse("OFFLINE_TOO_LONG", "no signed answer for more than %s days" % self.max_offline_days)

        expires_at = _time(license.get("expires_at"))
        grace_days = license.get("grace_days") if isinstance(license.get("grace_days"), int) else 0
        grace_ends_at = None if expires_at is None else expires_at + grace_days * _DAY
        if grace_ends_at is not None and now > grace_ends_at:
            return refuse("EXPIRED", "the licence expired at %s" % license.get("expires_at"))
        status = "grace" if expires_at is not None and now > expires_at else "active"
        return CheckResult(
            True,
            status=status,
            license=license,
            source=source,
            expires_at=_utc(expires_at),
            grace_ends_at=_utc(grace_ends_at),
            file_expires_at=_utc(file_expires_at),
        )

    # ---- verification ---------------------------------------------------------------------------------------

    def _trusted(self, state):
        revoked = set(state.get("revoked_key_ids", []))
        if self._pinned:
            return keyring.trusted_keys(self._shipped, [], [], revoked)
        return keyring.trusted_keys(self._shipped, self._roots, state.get("server_keys", []), revoked)

    def _open(self, envelope, state):
        """Opens an envelope with the keys trusted in `state`; VerificationError with the reason otherwise."""
        try:
            payload, _ = keyring.open_envelope(envelope, self._trusted(state), set(state.get("revoked_key_ids", [])))
        except keyring.EnvelopeError as err:
            raise VerificationError(err.reason, str(err)) from None
        return payload

    def _open_signed_license(self, document, state):
        """`{license?, signature?, envelope}`: the licence is the envelope's payload; `license`, when present, must equal it."""
        if not isinstance(document, dict):
            raise VerificationError("MALFORMED_ENVELOPE", "not a signed licence")
        if "envelope" not in document:
            raise VerificationError("UNSUPPORTED_FORMAT", "no envelope: a version 1 licence, which this client does not accept")
        license = self._open(document["envelope"], state)
        if "license" in document and not keyring.same_json(document["license"], license):
            raise VerificationError("PAYLOAD_MISMATCH", "the licence beside the envelope differs from the signed payload")
        return license

    def _open_license_file(self, text, state):
        document = dearmor(LICENSE_FILE_LABEL, text)
        if not isinstance(document, dict):
            raise VerificationError("MALFORMED_ENVELOPE", "not a licence file")
        return self._open_signed_license(document, state)

    def _keys_for(self, envelope):
        """The state after fetching the server's keys once, when the envelope names a key not yet trusted."""
        state = self._store.load()[1]
        key_id = envelope.get("key_id") if isinstance(envelope, dict) else None
        if isinstance(key_id, str) and key_id not in self._trusted(state) and key_id not in state.get("revoked_key_ids", []):
            try:
                self.refresh_keys()
            except (NetworkError, LicenseServerError, VerificationError):
                pass  # the envelope is then refused as signed by an unknown key
            state = self._store.load()[1]
        return state

    def verify_answer(self, answer, nonce, seat, what="validation"):
        """A signed answer (validate, usage): envelope verified, nonce echoed, this licence and machine named."""
        if not isinstance(answer, dict) or "envelope" not in answer:
            raise VerificationError("UNSUPPORTED_FORMAT", "the %s answer carries no envelope" % what)
        signed = self._open(answer["envelope"], self._keys_for(answer["envelope"]))
        if signed.get("nonce") != nonce:
            raise VerificationError("NONCE_MISMATCH", "the %s answer is not for this request (replayed?)" % what)
        if signed.get("license_key") != seat["license_key"] or signed.get("machine_fingerprint") != seat["machine_fingerprint"]:
            raise VerificationError("WRONG_SUBJECT", "the %s answer is about another licence or machine" % what)
        return signed

    def store_activation(self, answer):
        """Verifies an activation answer and stores it (what `activate()` does with the server's answer)."""
        if not isinstance(answer, dict) or "envelope" not in answer:
            raise VerificationError("UNSUPPORTED_FORMAT", "the activation answer carries no envelope")
        license = self._open_signed_license(answer, self._keys_for(answer["envelope"]))
        stored = {"envelope": answer["envelope"]}

        def change(state):
            state["activation"] = stored
            for name in ("license_file", "last_validation", "seat_lost"):
                state.pop(name, None)
            state["seat_seen_at"] = _iso(self._now())
            state["latest_signed_at"] = _later(state.get("latest_signed_at"), signed_time_of(license))

        self._update(change)
        return license

    _store_activation = store_activation

    def _store_license_file(self, text):
        document = dearmor(LICENSE_FILE_LABEL, text)
        if not isinstance(document, dict):
            raise VerificationError("MALFORMED_ENVELOPE", "not a licence file")
        envelope = document.get("envelope")
        license = self._open_signed_license(document, self._keys_for(envelope) if envelope else self._store.load()[1])
        if license.get("machine_fingerprint") != self.fingerprint():
            raise VerificationError("FINGERPRINT_MISMATCH", "the licence file was issued to another machine")

        def change(state):
            state["license_file"] = text
            state.pop("last_validation", None)
            state["latest_signed_at"] = _later(state.get("latest_signed_at"), signed_time_of(license))

        self._update(change)

    # ---- plumbing -------------------------------------------------------------------------------------------

    def _refresh_keys_if_due(self):
        fetched = _time(self._store.load()[1].get("server_keys_fetched_at"))
        now = self._now()
        if fetched is not None and fetched <= now < fetched + self.key_refresh_interval_seconds:
            return
        try:
            self.refresh_keys()
        except (NetworkError, LicenseServerError, VerificationError):
            pass  # a failed refresh keeps the stored key list

    def _stored_license(self, state):
        """(source, verified licence) of the stored licence file, else of the stored activation; (None, None) when neither."""
        if "license_file" in state:
            return "license_file", self._open_license_file(state["license_file"], state)
        if "activation" in state:
            return "activation", self._open_signed_license(state["activation"], state)
        return None, None

    def _seat_body(self):
        state = self._store.load()[1]
        try:
            license = self._stored_license(state)[1]
        except VerificationError:
            license = None
        if not license or not isinstance(license.get("license_key"), str):
            raise LicenseServerError("NOT_ACTIVATED", 400, "this machine has no stored licence; activate first")
        return {"license_key": license["license_key"], "machine_fingerprint": self.fingerprint()}

    def _activation_body(self, license_key, hostname, os_name, app_version):
        body = {"license_key": license_key, **self._machine_body(hostname, os_name, app_version)}
        if self.product:
            body["product"] = self.product
        return body

    def _machine_body(self, hostname, os_name, app_version):
        """What activation and trials send about this machine."""
        body = {
            "machine_fingerprint": self.fingerprint(),
            "hostname": hostname or socket.gethostname(),
            "os": os_name or "%s %s" % (platform.system(), platform.release()),
            # Ask for the signed envelope (docs/signing.md, Envelopes): this client verifies nothing else.
            "envelope": True,
        }
        if app_version:
            body["app_version"] = app_version
        return body

    def _update(self, change):
        with self._lock:
            kind, state = self._store.load()
            if kind != "ok":
                state = {"version": 1}
            change(state)
            self._store.save(state)

    def _url(self, path, base_url=None):
        base_url = base_url or self.server_url
        base = base_url if base_url.endswith("/") else base_url + "/"
        parts = urllib.parse.urlsplit(base)
        base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return urllib.parse.urljoin(base, path.lstrip("/"))

    def _request(self, method, path, body, idempotent, base_url=None):
        attempts = self.retries + 1 if idempotent else 1
        for attempt in range(1, attempts + 1):
            try:
                return self._request_once(method, path, body, base_url)
            except (NetworkError, LicenseServerError) as err:
                retryable = isinstance(err, NetworkError) or err.status in _RETRYABLE_STATUS
                if not retryable or attempt >= attempts:
                    raise
                retry_after = getattr(err, "details", {}).get("retry_after_seconds")
                if isinstance(retry_after, (int, float)) and not isinstance(retry_after, bool):
                    pause = min(float(retry_after), 30.0)
                else:
                    pause = 0.5 * 2 ** (attempt - 1)
                time.sleep(pause * (0.8 + random.random() * 0.4))
        raise AssertionError("unreachable")

    def _request_once(self, method, path, body, base_url=None):
        url = self._url(path, base_url)
        headers = {"accept": "application/json"}
        data = None
        if body is not None:
            headers["content-type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        answer = self._transport(method, url, data, headers, self.timeout)
        try:
            parsed = json.loads(answer.body.decode("utf-8"))
        except ValueError:
            raise NetworkError("%s %s: answer %s is not JSON" % (method, path, answer.status)) from None
        if 200 <= answer.status < 300:
            if not isinstance(parsed, dict):
                raise NetworkError("%s %s: answer is not a JSON object" % (method, path))
            return parsed
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            raise NetworkError("%s %s: answer %s without an error body" % (method, path, answer.status))
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
        retry_after = answer.headers.get("retry-after")
        if retry_after is not None and "retry_after_seconds" not in details:
            try:
                details["retry_after_seconds"] = float(retry_after)
            except ValueError:
                pass
        raise LicenseServerError(error["code"], answer.status, str(error.get("message", error["code"])), details)


__all__ = [
    "CheckResult",
    "HeartbeatLoop",
    "LicenseClient",
    "RelayHeartbeatLoop",
    "RelaySeat",
    "Response",
    "armor",
    "dearmor",
    "default_fingerprint",
    "urllib_transport",
]
