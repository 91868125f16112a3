package example.licenceserver.client;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader and writer (RFC 8259), so the client needs nothing beyond the JDK. Objects read as
 * {@code LinkedHashMap<String, Object>} (a repeated member: the last one wins, as in other JSON readers), arrays as
 * {@code List<Object>}, numbers as {@link BigDecimal}, and {@code true}, {@code false}, {@code null} as Boolean and null.
 * Nesting deeper than 64 levels, trailing data, lone surrogates escaped as text and control characters in strings are
 * refused with {@link IllegalArgumentException}.
 */
public final class Json {
  private static final int MAX_DEPTH = 64;

  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  /** Parses one JSON text. */
  public static Object parse(String text) {
    Json reader = new Json(text);
    reader.skipSpace();
    Object value = reader.value(0);
    reader.skipSpace();
    if (reader.at != text.length()) throw reader.error("trailing data");
    return value;
  }

  /** Parses UTF-8 bytes; bytes that are not UTF-8 are refused. */
  public static Object parse(byte[] utf8) {
    return parse(utf8(utf8));
  }

  /** Strict UTF-8 decoding: malformed or unmappable bytes are refused. */
  public static String utf8(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("not UTF-8", e);
    }
  }

  /** Parses a JSON object, or answers null when the text is not one. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> object(String text) {
    try {
      Object value = parse(text);
      return value instanceof Map ? (Map<String, Object>) value : null;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * The members of a top-level object as the exact source text of each value (what Go calls a raw message), or null
   * when the text is not an object.
   */
  public static Map<String, String> rawMembers(String text) {
    try {
      Json reader = new Json(text);
      Map<String, String> members = new LinkedHashMap<>();
      reader.skipSpace();
      reader.expect('{');
      reader.skipSpace();
      if (reader.peek() == '}') {
        reader.at++;
      } else {
        while (true) {
          reader.skipSpace();
          String name = reader.string();
          reader.skipSpace();
          reader.expect(':');
          reader.skipSpace();
          int start = reader.at;
          reader.value(1);
          members.put(name, text.substring(start, reader.at));
          reader.skipSpace();
          if (reader.peek() == ',') {
            reader.at++;
            continue;
          }
          reader.expect('}');
          break;
        }
      }
      reader.skipSpace();
      if (reader.at != text.length()) return null;
      return members;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private Object value(int depth) {
    if (depth > MAX_DEPTH) throw error("nested too deeply");
    char c = peek();
    switch (c) {
      case '{':
        return object(depth + 1);
      case '[':
        return array(depth + 1);
      case '"':
        return string();
      case 't':
        literal("true");
        return Boolean.TRUE;
      case 'f':
        literal("false");
        return Boolean.FALSE;
      case 'n':
        literal("null");
        return null;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        throw error("unexpected character");
    }
  }

  private Map<String, Object> object(int depth) {
    expect('{');
    Map<String, Object> members = new LinkedHashMap<>();
    skipSpace();
    if (peek() == '}') {
      at++;
      return members;
    }
    while (true) {
      skipSpace();
      String name = string();
      skipSpace();
      expect(':');
      skipSpace();
      members.put(name, value(depth));
      skipSpace();
      if (peek() == ',') {
        at++;
        continue;
      }
      expect('}');
      return members;
    }
  }

  private List<Object> array(int depth) {
    expect('[');
    List<Object> items = new ArrayList<>();
    skipSpace();
    if (peek() == ']') {
      at++;
      return items;
    }
    while (true) {
      skipSpace();
      items.add(value(depth));
      skipSpace();
      if (peek() == ',') {
        at++;
        continue;
      }
      expect(']');
      return items;
    }
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (true) {
      if (at >= text.length()) throw error("unterminated string");
      char c = text.charAt(at++);
      if (c == '"') return out.toString();
      if (c < 0x20) throw error("control character in a string");
      if (c != '\\') {
        out.append(c);
        continue;
      }
      if (at >= text.length()) throw error("unterminated escape");
      char e = text.charAt(at++);
      switch (e) {
        case '"': out.append('"'); break;
        case '\\': out.append('\\'); break;
        case '/': out.append('/'); break;
        case 'b': out.append('\b'); break;
        case 'f': out.append('\f'); break;
        case 'n': out.append('\n'); break;
        case 'r': out.append('\r'); break;
        case 't': out.append('\t'); break;
        case 'u': {
          char unit = hex4();
          if (Character.isHighSurrogate(unit)) {
            if (!text.startsWith("\\u", at)) throw error("lone surrogate");
            at += 2;
            char low = hex4();
            if (!Character.isLowSurrogate(low)) throw error("lone surrogate");
            out.append(unit).append(low);
          } else if (Character.isLowSurrogate(unit)) {
            throw error("lone surrogate");
          } else {
            out.append(unit);
          }
          break;
        }
        default:
          throw error("unknown escape");
      }
    }
  }

  private char hex4() {
    if (at + 4 > text.length()) throw error("short \\u escape");
    int value = 0;
    for (int i = 0; i < 4; i++) {
      int digit = Character.digit(text.charAt(at++), 16);
      if (digit < 0) throw error("bad \\u escape");
      value = value * 16 + digit;
    }
    return (char) value;
  }

  private BigDecimal number() {
    int start = at;
    if (peek() == '-') at++;
    if (peek() == '0') {
      at++;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') at++;
    } else {
      throw error("bad number");
    }
    if (peek() == '.') {
      at++;
      if (!(peek() >= '0' && peek() <= '9')) throw error("bad fraction");
      while (peek() >= '0' && peek() <= '9') at++;
    }
    if (peek() == 'e' || peek() == 'E') {
      at++;
      if (peek() == '+' || peek() == '-') at++;
      if (!(peek() >= '0' && peek() <= '9')) throw error("bad exponent");
      while (peek() >= '0' && peek() <= '9') at++;
    }
    try {
      return new BigDecimal(text.substring(start, at));
    } catch (NumberFormatException | ArithmeticException e) {
      throw error("number out of range");
    }
  }

  private void literal(String word) {
    if (!text.startsWith(word, at)) throw error("unexpected literal");
    at += word.length();
  }

  private void expect(char c) {
    if (peek() != c) throw error("expected '" + c + "'");
    at++;
  }

  private char peek() {
    return at < text.length() ? text.charAt(at) : '\0';
  }

  private void skipSpace() {
    while (at < text.length()) {
      char c = text.charAt(at);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
      at++;
    }
  }

  private IllegalArgumentException error(String why) {
    return new IllegalArgumentException("JSON: " + why + " at offset " + at);
  }

  // ---- writing --------------------------------------------------------------------------------------------------

  /** Writes a value (Map, List, String, Number, Boolean, null) as compact JSON. */
  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object value, StringBuilder out) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String) {
      quote((String) value, out);
    } else if (value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof BigDecimal) {
      out.append(((BigDecimal) value).toString());
    } else if (value instanceof Integer || value instanceof Long) {
      out.append(value);
    } else if (value instanceof Number) {
      double d = ((Number) value).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("JSON has no NaN or infinity");
      out.append(BigDecimal.valueOf(d).stripTrailingZeros().toString());
    } else if (value instanceof Map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        if (!first) out.append(',');
        first = false;
        quote(String.valueOf(e.getKey()), out);
        out.append(':');
        write(e.getValue(), out);
      }
      out.append('}');
    } else if (value instanceof List) {
      out.append('[');
      boolean first = true;
      for (Object item : (List<?>) value) {
        if (!first) out.append(',');
        first = false;
        write(item, out);
      }
      out.append(']');
    } else if (value instanceof RawJson) {
      out.append(((RawJson) value).text);
    } else {
      throw new IllegalArgumentException("cannot write " + value.getClass().getName() + " as JSON");
    }
  }

  private static void quote(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        default:
          if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
      }
    }
    out.append('"');
  }

  /** JSON text written as it is (a value kept byte for byte, such as a stored envelope). */
  public static final class RawJson {
    final String text;

    public RawJson(String text) {
      this.text = text;
    }
  }

  // ---- reading values ---------------------------------------------------------------------------------------------

  /** Two JSON values are equal as values: member order does not matter, {@code 1} equals {@code 1.0}, {@code true} is not {@code 1}. */
  public static boolean sameValue(Object x, Object y) {
    if (x instanceof Map && y instanceof Map) {
      Map<?, ?> a = (Map<?, ?>) x;
      Map<?, ?> b = (Map<?, ?>) y;
      if (a.size() != b.size()) return false;
      for (Map.Entry<?, ?> e : a.entrySet()) {
        if (!b.containsKey(e.getKey()) || !sameValue(e.getValue(), b.get(e.getKey()))) return false;
      }
      return true;
    }
    if (x instanceof List && y instanceof List) {
      List<?> a = (List<?>) x;
      List<?> b = (List<?>) y;
      if (a.size() != b.size()) return false;
      for (int i = 0; i < a.size(); i++) if (!sameValue(a.get(i), b.get(i))) return false;
      return true;
    }
    if (x instanceof BigDecimal && y instanceof BigDecimal) return ((BigDecimal) x).compareTo((BigDecimal) y) == 0;
    return x == null ? y == null : x.equals(y);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> asObject(Object value) {
    return value instanceof Map ? (Map<String, Object>) value : null;
  }

  @SuppressWarnings("unchecked")
  static List<Object> asList(Object value) {
    return value instanceof List ? (List<Object>) value : Collections.emptyList();
  }

  static String asString(Object value) {
    return value instanceof String ? (String) value : null;
  }

  /** A whole number that fits a long, else null. */
  static Long asLong(Object value) {
    if (!(value instanceof BigDecimal)) return null;
    try {
      return ((BigDecimal) value).longValueExact();
    } catch (ArithmeticException e) {
      return null;
    }
  }
}
