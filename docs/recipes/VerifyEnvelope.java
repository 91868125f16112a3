// Verify a signed envelope without the client library: decode, verify, parse (Java 17, the JDK only).
//
//   java VerifyEnvelope.java PAYLOAD ALG SIGNATURE public.pem      # the envelope's members as arguments
//   java VerifyEnvelope.java --vectors ../test-vectors/vectors.json
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class VerifyEnvelope {
    /** Unpadded base64url only: padding, the standard alphabet or another spelling of the same bytes is refused. */
    static byte[] b64url(String text) {
        if (!text.matches("[A-Za-z0-9_-]*")) throw new IllegalArgumentException("not base64url");
        byte[] raw = Base64.getUrlDecoder().decode(text);
        if (!Base64.getUrlEncoder().withoutPadding().encodeToString(raw).equals(text)) throw new IllegalArgumentException("not unpadded base64url");
        return raw;
    }

    static PublicKey publicKey(String pem) throws Exception {
        byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        String type = der.length < 100 ? "Ed25519" : "RSA"; // an Ed25519 SPKI is 44 bytes, an RSA one hundreds
        return KeyFactory.getInstance(type).generatePublic(new X509EncodedKeySpec(der));
    }

    /** The payload bytes (UTF-8 JSON) once the key signed them; parse them only after this. */
    static byte[] openEnvelope(String payload, String alg, String signature, PublicKey key) throws Exception {
        byte[] bytes = b64url(payload), sig = b64url(signature); // 1. decode
        String algorithm = switch (alg) { // 2. verify the bytes as they are: the alg must be the key's
            case "RS256" -> "SHA256withRSA";
            case "EdDSA" -> "Ed25519";
            default -> throw new IllegalArgumentException("unknown alg " + alg);
        };
        if (!key.getAlgorithm().equals(alg.equals("RS256") ? "RSA" : "EdDSA")) throw new IllegalArgumentException("alg does not match the key");
        Signature verifier = Signature.getInstance(algorithm);
        verifier.initVerify(key);
        verifier.update(bytes);
        if (!verifier.verify(sig)) throw new IllegalArgumentException("the signature does not verify");
        return bytes;
    }
    // 3. Parse with your JSON library (Jackson: new ObjectMapper().readTree(bytes)), then check machine_fingerprint,
    // product, expires_at + grace_days, file_expires_at; for a signed validate answer, nonce, license_key and fingerprint.

    public static void main(String[] args) throws Exception {
        if (!args[0].equals("--vectors")) {
            byte[] bytes = openEnvelope(args[0], args[1], args[2], publicKey(Files.readString(Path.of(args[3]))));
            System.out.println(new String(bytes, StandardCharsets.UTF_8));
            return;
        }
        String doc = Files.readString(Path.of(args[1]));
        Map<String, PublicKey> keys = new HashMap<>(); // key_id: the first 16 hex digits of SHA-256 over the DER SPKI
        Matcher pems = Pattern.compile("\"public_key_pem\": \"([^\"]+)\"").matcher(doc);
        while (pems.find()) {
            PublicKey key = publicKey(pems.group(1).replace("\\n", "\n"));
            keys.put(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getEncoded())).substring(0, 16), key);
        }
        Matcher envelopes = Pattern.compile("\"envelope\": \\{([^{}]+)\\}").matcher(doc);
        int verified = 0;
        while (envelopes.find()) {
            Map<String, String> e = new HashMap<>();
            Matcher member = Pattern.compile("\"(\\w+)\": \"([^\"]*)\"").matcher(envelopes.group(1));
            while (member.find()) e.put(member.group(1), member.group(2));
            PublicKey key = keys.get(e.get("key_id"));
            String text = new String(openEnvelope(e.get("payload"), e.get("alg"), e.get("signature"), key), StandardCharsets.UTF_8);
            if (!text.startsWith("{\"")) throw new AssertionError("the payload is not a JSON object");
            String other = e.get("alg").equals("RS256") ? "EdDSA" : "RS256";
            for (String[] bad : new String[][] {{e.get("payload") + "=", e.get("alg")}, {e.get("payload").substring(2), e.get("alg")}, {e.get("payload"), other}}) {
                try {
                    openEnvelope(bad[0], bad[1], e.get("signature"), key);
                    throw new AssertionError("a damaged envelope verified");
                } catch (IllegalArgumentException refused) {
                    // expected
                }
            }
            verified++;
        }
        if (verified == 0) throw new AssertionError("no envelope in " + args[1]);
        System.out.println(verified + " envelopes verified, damaged ones refused");
    }
}
