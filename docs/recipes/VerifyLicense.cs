// Verify a licence payload without the client library (.NET 8): RFC 8785 with Org.Webpki.JsonCanonicalizer
// (cyberphone/json-canonicalization: folders dotnet/jsoncanonicalizer and the ES6 number serializer it references,
// dotnet/es6numberserialization, added to the project), RSA.VerifyData for RSA-SHA256.
//   dotnet run -- license.json public.pem
//   dotnet run -- --answer answer.json NONCE LICENSE_KEY FINGERPRINT public.pem
using System.Security.Cryptography;
using System.Text.Json;
using Org.Webpki.JsonCanonicalizer;

static bool Verify(string licenseJson, string signature, string publicKeyPem)
{
    const string prefix = "RSA-SHA256:";
    if (!signature.StartsWith(prefix, StringComparison.Ordinal)) return false;
    // Canonicalize the raw text as received. Never JsonSerializer.Serialize it first: System.Text.Json escapes
    // non-ASCII and HTML characters (\u00FC, \u003C) by default, which is not JCS and breaks the signature.
    byte[] canonical = new JsonCanonicalizer(licenseJson).GetEncodedUTF8();
    using var rsa = RSA.Create();
    rsa.ImportFromPem(publicKeyPem);
    try
    {
        byte[] sig = Convert.FromBase64String(signature[prefix.Length..]);
        return rsa.VerifyData(canonical, sig, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
    }
    catch (FormatException)
    {
        return false;
    }
}

// A signed /validate answer (sent with nonce): signed are the JCS bytes of the answer without "signature". Only an
// answer that verifies, echoes the nonce and names this licence and machine is a verdict.
static bool VerifyValidateAnswer(string answerJson, string nonce, string licenseKey, string fingerprint, string publicKeyPem)
{
    var answer = System.Text.Json.Nodes.JsonNode.Parse(answerJson)!.AsObject();
    string signature = answer["signature"]?.GetValue<string>() ?? "";
    answer.Remove("signature");
    // ToJsonString may escape characters; the canonicalizer parses it again, so the canonical bytes are the same.
    return Verify(answer.ToJsonString(), signature, publicKeyPem)
        && answer["nonce"]?.GetValue<string>() == nonce
        && answer["license_key"]?.GetValue<string>() == licenseKey
        && answer["machine_fingerprint"]?.GetValue<string>() == fingerprint;
}

if (args[0] == "--answer") // --answer answer.json NONCE LICENSE_KEY FINGERPRINT public.pem
{
    bool verified = VerifyValidateAnswer(File.ReadAllText(args[1]), args[2], args[3], args[4], File.ReadAllText(args[5]));
    Console.WriteLine(verified ? "verified answer" : "invalid");
    return verified ? 0 : 1;
}

using var document = JsonDocument.Parse(File.ReadAllText(args[0]));
string license = document.RootElement.GetProperty("license").GetRawText();
string signature = document.RootElement.GetProperty("signature").GetString() ?? "";
bool valid = Verify(license, signature, File.ReadAllText(args[1]));
Console.WriteLine(valid ? "valid" : "invalid");
return valid ? 0 : 1;
