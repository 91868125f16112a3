// Verify a licence payload without the client library (.NET 8): RFC 8785 with Org.Webpki.JsonCanonicalizer
// (cyberphone/json-canonicalization, folder dotnet/jsoncanonicalizer, added to the project), RSA.VerifyData for RSA-SHA256.
//   dotnet run -- license.json public.pem
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

using var document = JsonDocument.Parse(File.ReadAllText(args[0]));
string license = document.RootElement.GetProperty("license").GetRawText();
string signature = document.RootElement.GetProperty("signature").GetString() ?? "";
bool valid = Verify(license, signature, File.ReadAllText(args[1]));
Console.WriteLine(valid ? "valid" : "invalid");
return valid ? 0 : 1;
