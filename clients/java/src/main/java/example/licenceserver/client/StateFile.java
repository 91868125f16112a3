package example.licenceserver.client;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Everything the client remembers between runs, in one JSON file with an HMAC over the exact bytes of its state,
 * written atomically (temporary file, fsync, rename, fsync of the folder), so a crash leaves the old or the new file,
 * never half of one (docs/clients.md, Behaviour worth knowing).
 */
final class StateFile {
  enum Kind { OK, MISSING, CORRUPT, TAMPERED }

  /** The loaded state: its kind and its members (an empty version 1 state unless OK). */
  static final class Loaded {
    final Kind kind;
    final Map<String, Object> state;

    Loaded(Kind kind, Map<String, Object> state) {
      this.kind = kind;
      this.state = state;
    }
  }

  private static final SecureRandom RANDOM = new SecureRandom();
  private final Path path;
  private final byte[] macKey;

  StateFile(Path path, String appSalt) {
    this.path = path;
    try {
      this.macKey = MessageDigest.getInstance("SHA-256").digest(("licence-client-state\0" + appSalt).getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static Map<String, Object> empty() {
    Map<String, Object> state = new LinkedHashMap<>();
    state.put("version", BigDecimal.ONE);
    return state;
  }

  private String mac(String state) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(macKey, "HmacSHA256"));
      return HexFormat.of().formatHex(mac.doFinal(state.getBytes(StandardCharsets.UTF_8)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Creates the state file's folder (and missing parents) with mode 0700 and checks that it can be written; a
   * {@link LicenceException.StateError} otherwise (docs/clients.md, The state file).
   */
  void prepare() throws LicenceException.StateError {
    Path folder = path.toAbsolutePath().getParent();
    try {
      if (!Files.isDirectory(folder)) createFolder(folder);
      if (!Files.isWritable(folder)) throw new IOException("not writable");
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      throw new LicenceException.StateError(path, "the state file's folder " + folder + " cannot be created or written: " + e, e);
    }
  }

  private static void createFolder(Path folder) throws IOException {
    Path parent = folder.getParent();
    if (parent != null && !Files.exists(parent)) createFolder(parent);
    try {
      Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (UnsupportedOperationException e) {
      Files.createDirectory(folder); // not a POSIX file system (Windows): the user's own folder rights apply
    }
  }

  Loaded load() {
    String text;
    try {
      text = Json.utf8(Files.readAllBytes(path));
    } catch (NoSuchFileException e) {
      return new Loaded(Kind.MISSING, empty());
    } catch (IOException | IllegalArgumentException e) {
      return new Loaded(Kind.CORRUPT, empty());
    }
    Map<String, String> document = Json.rawMembers(text.strip());
    if (document == null || document.get("state") == null || document.get("mac") == null) return new Loaded(Kind.CORRUPT, empty());
    Map<String, Object> state = Json.object(document.get("state"));
    Object storedMac;
    try {
      storedMac = Json.parse(document.get("mac"));
    } catch (IllegalArgumentException e) {
      return new Loaded(Kind.CORRUPT, empty());
    }
    if (state == null || !(storedMac instanceof String) || !BigDecimal.ONE.equals(state.get("version"))) {
      return new Loaded(Kind.CORRUPT, empty());
    }
    if (!MessageDigest.isEqual(((String) storedMac).getBytes(StandardCharsets.US_ASCII), mac(document.get("state")).getBytes(StandardCharsets.US_ASCII))) {
      return new Loaded(Kind.TAMPERED, empty());
    }
    return new Loaded(Kind.OK, state);
  }

  void save(Map<String, Object> state) throws IOException {
    String body = Json.write(state);
    Map<String, Object> document = new LinkedHashMap<>();
    document.put("state", new Json.RawJson(body));
    document.put("mac", mac(body));
    byte[] bytes = (Json.write(document) + "\n").getBytes(StandardCharsets.UTF_8);
    Path folder = path.toAbsolutePath().getParent();
    byte[] suffix = new byte[6];
    RANDOM.nextBytes(suffix);
    Path temporary = folder.resolve("." + HexFormat.of().formatHex(suffix) + ".tmp");
    try {
      try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        channel.write(java.nio.ByteBuffer.wrap(bytes));
        channel.force(true);
      }
      try {
        Files.move(temporary, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temporary, path, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      Files.deleteIfExists(temporary);
      throw e;
    }
    try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException e) {
      // Windows cannot sync a folder; the rename is still atomic there.
    }
  }
}
