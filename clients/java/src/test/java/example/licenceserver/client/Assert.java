package example.licenceserver.client;

import java.util.Objects;

/** The assertions of the tests. */
final class Assert {
  private Assert() {}

  static void equal(Object expected, Object actual) {
    if (!Objects.equals(expected, actual)) throw new AssertionError("expected <" + expected + "> but was <" + actual + ">");
  }

  static void check(boolean condition, String what) {
    if (!condition) throw new AssertionError(what);
  }

  interface Action {
    void run() throws Exception;
  }

  /** The action throws an exception of {@code type}, which is returned. */
  static <T extends Throwable> T raises(Class<T> type, Action action) {
    try {
      action.run();
    } catch (Throwable e) {
      if (type.isInstance(e)) return type.cast(e);
      throw new AssertionError("expected " + type.getSimpleName() + " but got " + e, e);
    }
    throw new AssertionError("expected " + type.getSimpleName() + " but nothing was thrown");
  }

  /** A verification failure with this reason. */
  static void refused(String reason, Action action) {
    equal(reason, raises(LicenceException.VerificationError.class, action).reason());
  }
}
