package example.licenceserver.client;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** The JSON reader: what it accepts, what it refuses, and that hostile input never escapes as another exception. */
final class JsonTest {
  @Test
  void readsEveryKindOfValue() {
    Map<String, Object> o = Json.object("{\"a\":[1,2.5,-3e2],\"b\":{\"c\":null},\"d\":true,\"e\":\"\\u00e9\\ud83d\\ude00\\n\"}");
    Assert.equal(List.of(new BigDecimal("1"), new BigDecimal("2.5"), new BigDecimal("-3e2")), o.get("a"));
    Assert.check(Json.asObject(o.get("b")).containsKey("c"), "null member kept");
    Assert.equal(Boolean.TRUE, o.get("d"));
    Assert.equal("é😀\n", o.get("e"));
  }

  @Test
  void refusesWhatIsNotJson() {
    for (String text : new String[] {"", "{", "{\"a\":1,}", "[1,]", "01", "1.", "-", "+1", "NaN", "{\"a\" 1}", "\"\\x\"", "\"a\nb\"", "\"\\ud800\"",
        "\"\\udc00x\"", "[1] 2", "tru", "{'a':1}", "[" .repeat(100) + "]".repeat(100)}) {
      Assert.raises(IllegalArgumentException.class, () -> Json.parse(text));
    }
  }

  @Test
  void refusesBytesThatAreNotUtf8() {
    Assert.raises(IllegalArgumentException.class, () -> Json.parse(new byte[] {'"', (byte) 0xc3, '"'}));
    Assert.raises(IllegalArgumentException.class, () -> Json.parse(new byte[] {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'}));
  }

  @Test
  void writesWhatItReads() {
    String text = "{\"a\":[1,2.5,null,true],\"b\":\"\\\"\\\\\\u0001\",\"c\":{}}";
    Assert.equal(text, Json.write(Json.parse(text)));
  }

  @Test
  void comparesValuesNotSpellings() {
    Assert.check(Json.sameValue(Json.parse("{\"a\":1,\"b\":[1.0]}"), Json.parse("{\"b\":[1],\"a\":1.00}")), "order and number spelling");
    Assert.check(!Json.sameValue(Json.parse("{\"a\":true}"), Json.parse("{\"a\":1}")), "true is not 1");
    Assert.check(!Json.sameValue(Json.parse("{\"a\":1}"), Json.parse("{\"a\":1,\"b\":null}")), "a missing member");
  }

  @Test
  void rawMembersKeepTheSourceText() {
    Map<String, String> members = Json.rawMembers(" {\"state\": {\"x\" : [1, 2]} , \"mac\":\"ab\"}\n");
    Assert.equal("{\"x\" : [1, 2]}", members.get("state"));
    Assert.equal("\"ab\"", members.get("mac"));
    Assert.equal(null, Json.rawMembers("[1]"));
    Assert.equal(null, Json.rawMembers("{\"a\":1} x"));
  }

  @Test
  void fuzzedInputOnlyEverRaisesIllegalArgument() {
    Random random = new Random(20261128);
    String alphabet = "{}[]\",:\\/ tfnrue0123456789.-+eEabu\u00e9\ud83d\n";
    String seed = "{\"license\":{\"a\":[1,2,{\"b\":\"c\\u0041\"}]},\"envelope\":{\"payload\":\"x\"}}";
    for (int i = 0; i < 20_000; i++) {
      StringBuilder text = new StringBuilder(seed);
      for (int edits = 1 + random.nextInt(4); edits > 0; edits--) {
        int at = random.nextInt(text.length() + 1);
        if (random.nextBoolean() && at < text.length()) text.deleteCharAt(at);
        else text.insert(at, alphabet.charAt(random.nextInt(alphabet.length())));
      }
      try {
        Json.parse(text.toString());
      } catch (IllegalArgumentException expected) {
        // refused: fine
      }
      byte[] bytes = new byte[random.nextInt(64)];
      random.nextBytes(bytes);
      try {
        Json.parse(bytes);
      } catch (IllegalArgumentException expected) {
        // refused: fine
      }
      Assert.check(LicenseClient.dearmor("LICENSE FILE", new String(bytes, StandardCharsets.ISO_8859_1)) == null, "random bytes are no licence file");
    }
  }
}
