"""The client's one state file: JSON with an HMAC, written atomically (docs/clients.md, Behaviour worth knowing)."""

import hashlib
import hmac
import json
import os
import secrets
import stat

from .errors import StateError


def _mac_input(state):
    # The client's own serialization, only ever compared with itself: not a signature format.
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class StateFile:
    """Loads as ("ok" | "missing" | "corrupt" | "tampered", state); saves via a temporary file, fsync and rename."""

    def __init__(self, path, app_salt):
        self.path = os.fspath(path)
        self._mac_key = hashlib.sha256(b"licence-client-state\0" + app_salt.encode("utf-8")).digest()

    def _mac(self, state):
        return hmac.new(self._mac_key, _mac_input(state), hashlib.sha256).hexdigest()

    def prepare(self):
        """Creates the state file's folder (and missing parents) with mode 0700 and checks it can be written;
        StateError (STATE_PATH) otherwise (docs/clients.md, The state file)."""
        folder = os.path.dirname(os.path.abspath(self.path))
        try:
            missing, part = [], folder
            while not os.path.exists(part) and os.path.dirname(part) != part:
                missing.append(part)
                part = os.path.dirname(part)
            for part in reversed(missing):
                os.mkdir(part, 0o700)
            if not stat.S_ISDIR(os.stat(folder).st_mode):
                raise NotADirectoryError(folder)
            if not os.access(folder, os.W_OK | os.X_OK):
                raise PermissionError("not writable")
        except OSError as err:
            raise StateError(self.path, "the state file's folder %s cannot be created or written: %s" % (folder, err)) from err

    def load(self):
        try:
            with open(self.path, "r", encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            return "missing", {"version": 1}
        except OSError:
            return "corrupt", {"version": 1}
        try:
            parsed = json.loads(text)
        except ValueError:
            return "corrupt", {"version": 1}
        if (
            not isinstance(parsed, dict)
            or not isinstance(parsed.get("state"), dict)
            or not isinstance(parsed.get("mac"), str)
            or parsed["state"].get("version") != 1
        ):
            return "corrupt", {"version": 1}
        if not hmac.compare_digest(parsed["mac"], self._mac(parsed["state"])):
            return "tampered", {"version": 1}
        return "ok", parsed["state"]

    def save(self, state):
        try:
            self._write(state)
        except OSError as err:
            raise StateError(self.path, "cannot write the state file %s: %s" % (self.path, err)) from err

    def _write(self, state):
        text = json.dumps({"state": state, "mac": self._mac(state)}, indent=2, ensure_ascii=False) + "\n"
        folder = os.path.dirname(os.path.abspath(self.path))
        temporary = os.path.join(folder, ".%s.tmp" % secrets.token_hex(6))
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
        try:
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:
            pass  # Windows cannot open a folder for fsync; the rename is still atomic there
