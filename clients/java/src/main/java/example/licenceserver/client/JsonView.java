package example.licenceserver.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** A verified JSON object with typed getters; {@link #raw()} holds every member as received. */
public class JsonView {
  final Map<String, Object> raw;

  JsonView(Map<String, Object> raw) {
    this.raw = raw == null ? Collections.emptyMap() : Collections.unmodifiableMap(raw);
  }

  /** Every member as received (numbers are BigDecimal). */
  public Map<String, Object> raw() {
    return raw;
  }

  String string(String name) {
    return Json.asString(raw.get(name));
  }

  Long number(String name) {
    return Json.asLong(raw.get(name));
  }

  boolean bool(String name) {
    return Boolean.TRUE.equals(raw.get(name));
  }

  List<String> strings(String name) {
    List<String> out = new ArrayList<>();
    for (Object item : Json.asList(raw.get(name))) if (item instanceof String) out.add((String) item);
    return Collections.unmodifiableList(out);
  }

  @Override
  public String toString() {
    return Json.write(raw);
  }
}
