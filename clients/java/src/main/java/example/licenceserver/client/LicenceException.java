package example.licenceserver.client;

import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;

/**
 * Every failure of the client: a {@link ServerError}, a {@link NetworkError}, a {@link VerificationError} or a
 * {@link StateError}.
 */
public abstract class LicenceException extends Exception {
  private static final long serialVersionUID = 1L;

  LicenceException(String message, Throwable cause) {
    super(message, cause);
  }

  /** The server's error answer {@code {"error": {"code", "message", "details"}}} with its HTTP status. */
  public static final class ServerError extends LicenceException {
    private static final long serialVersionUID = 1L;
    private final String code;
    private final int status;
    private final transient Map<String, Object> details;

    ServerError(String code, int status, String message, Map<String, Object> details) {
      super(code + " (" + status + "): " + message, null);
      this.code = code;
      this.status = status;
      this.details = details == null ? Collections.emptyMap() : details;
    }

    /** The stable error code, e.g. INVALID_KEY, ALREADY_ACTIVATED, TRIAL_ALREADY_USED. */
    public String code() {
      return code;
    }

    public int status() {
      return status;
    }

    public Map<String, Object> details() {
      return details;
    }
  }

  /** No answer, a timeout, or an answer that is not the API's. */
  public static final class NetworkError extends LicenceException {
    private static final long serialVersionUID = 1L;

    NetworkError(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** An answer or licence file that does not verify; {@link #reason()} is a stable reason code. */
  public static final class VerificationError extends LicenceException {
    private static final long serialVersionUID = 1L;
    private final String reason;

    VerificationError(String reason, String message) {
      super(reason + ": " + message, null);
      this.reason = reason;
    }

    public String reason() {
      return reason;
    }
  }

  /**
   * The state file cannot be kept at {@code statePath}: its folder cannot be created (mode 0700) or written, or the
   * file cannot be written (docs/clients.md, The state file). Never a {@link NetworkError}: the network is fine, this
   * machine is not. Raised before any network call; {@link #code()} is {@code STATE_PATH}.
   */
  public static final class StateError extends LicenceException {
    private static final long serialVersionUID = 1L;
    private final transient Path path;

    StateError(Path path, String message, Throwable cause) {
      super("STATE_PATH: " + message, cause);
      this.path = path;
    }

    public String code() {
      return "STATE_PATH";
    }

    public Path path() {
      return path;
    }
  }
}
