// Verify a signed envelope without the client library: decode, verify, parse (.NET 8). RS256 with the built-in RSA;
// EdDSA (Ed25519 keys) with the NSec.Cryptography package (dotnet add package NSec.Cryptography), as .NET has none.
//   dotnet run -- envelope.json public.pem      # {"payload", "alg", "key_id", "signature"}
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;

// Unpadded base64url only: padding, the standard alphabet or another spelling of the same bytes is refused.
static byte[] B64Url(string text)
{
    if (!Regex.IsMatch(text, "^[A-Za-z0-9_-]*$") || text.Length % 4 == 1) throw new FormatException("not base64url");
    string padded = text.Replace('-', '+').Replace('_', '/') + new string('=', (4 - text.Length % 4) % 4);
    byte[] raw = Convert.FromBase64String(padded);
    if (Convert.ToBase64String(raw).TrimEnd('=').Replace('+', '-').Replace('/', '_') != text) throw new FormatException("not unpadded base64url");
    return raw;
}

// The payload bytes (UTF-8 JSON) once the key signed them; parse them only after this.
static byte[] OpenEnvelope(JsonElement envelope, string publicKeyPem)
{
    byte[] payload = B64Url(envelope.GetProperty("payload").GetString()!); // 1. decode
    byte[] signature = B64Url(envelope.GetProperty("signature").GetString()!);
    bool verified = envelope.GetProperty("alg").GetString() switch // 2. verify the bytes as they are
    {
        "RS256" => VerifyRsa(payload, signature, publicKeyPem),
        "EdDSA" => NSec.Cryptography.SignatureAlgorithm.Ed25519.Verify(
            NSec.Cryptography.PublicKey.Import(NSec.Cryptography.SignatureAlgorithm.Ed25519,
                Encoding.ASCII.GetBytes(publicKeyPem), NSec.Cryptography.KeyBlobFormat.PkixPublicKeyText),
            payload, signature),
        _ => false,
    };
    if (!verified) throw new CryptographicException("the signature does not verify");
    return payload;
}

static bool VerifyRsa(byte[] payload, byte[] signature, string publicKeyPem)
{
    using var rsa = RSA.Create();
    rsa.ImportFromPem(publicKeyPem); // throws for an Ed25519 key: alg and key must agree
    return rsa.VerifyData(payload, signature, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
}

using var document = JsonDocument.Parse(File.ReadAllText(args[0]));
byte[] bytes = OpenEnvelope(document.RootElement, File.ReadAllText(args[1]));
using var license = JsonDocument.Parse(bytes); // 3. parse, only now
// Then check machine_fingerprint, product, expires_at + grace_days, file_expires_at; for a signed validate answer,
// that nonce, license_key and machine_fingerprint are those you sent.
Console.WriteLine(license.RootElement.GetProperty("license_key").GetString());
return 0;
