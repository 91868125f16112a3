package example.licenceserver.client;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Runs every {@link Test} method of the test classes (a fresh instance per method) and prints one line per test and
 * the closing line "N passed, N failed"; exits 1 when a test failed. Arguments: class names to run (default: all).
 */
public final class TestMain {
  private static final List<Class<?>> CLASSES = List.of(JsonTest.class, OfflineTest.class, RelayTest.class, OnlineTest.class, RelayOnlineTest.class);

  public static void main(String[] args) throws Exception {
    List<Class<?>> classes = new ArrayList<>();
    for (Class<?> c : CLASSES) if (args.length == 0 || Arrays.asList(args).contains(c.getSimpleName())) classes.add(c);
    int passed = 0;
    int failed = 0;
    for (Class<?> c : classes) {
      Method[] methods = c.getDeclaredMethods();
      Arrays.sort(methods, Comparator.comparing(Method::getName));
      for (Method m : methods) {
        if (!m.isAnnotationPresent(Test.class)) continue;
        long started = System.nanoTime();
        try {
          m.setAccessible(true);
          m.invoke(c.getDeclaredConstructor().newInstance());
          passed++;
          System.out.printf("ok   %s.%s (%d ms)%n", c.getSimpleName(), m.getName(), (System.nanoTime() - started) / 1_000_000);
        } catch (InvocationTargetException e) {
          failed++;
          System.out.printf("FAIL %s.%s: %s%n", c.getSimpleName(), m.getName(), e.getCause());
          e.getCause().printStackTrace(System.out);
        }
      }
    }
    OnlineTest.stopServer();
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
