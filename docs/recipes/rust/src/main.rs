//! Verify a signed envelope without the client library: decode, verify, parse.
//!
//!     cargo run -- envelope.json public.pem      # {"payload", "alg", "key_id", "signature"}
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use ed25519_dalek::pkcs8::DecodePublicKey as _;
use rsa::pkcs8::DecodePublicKey as _;
use rsa::signature::Verifier as _;

/// Unpadded base64url only: padding, the standard alphabet or another spelling of the same bytes is refused.
fn b64url(text: &str) -> Result<Vec<u8>, String> {
    let raw = URL_SAFE_NO_PAD.decode(text).map_err(|e| e.to_string())?;
    if URL_SAFE_NO_PAD.encode(&raw) != text {
        return Err("not unpadded base64url".into());
    }
    Ok(raw)
}

/// The payload bytes (UTF-8 JSON) once the key signed them; parse them only after this.
fn open_envelope(envelope: &serde_json::Value, public_key_pem: &str) -> Result<Vec<u8>, String> {
    let member = |name: &str| envelope[name].as_str().ok_or(format!("no {name}"));
    let payload = b64url(member("payload")?)?; // 1. decode
    let signature = b64url(member("signature")?)?;
    match member("alg")? { // 2. verify the bytes as they are: the alg must be the key's
        "RS256" => {
            let key = rsa::RsaPublicKey::from_public_key_pem(public_key_pem).map_err(|e| e.to_string())?;
            let sig = rsa::pkcs1v15::Signature::try_from(signature.as_slice()).map_err(|e| e.to_string())?;
            rsa::pkcs1v15::VerifyingKey::<rsa::sha2::Sha256>::new(key).verify(&payload, &sig).map_err(|e| e.to_string())?;
        }
        "EdDSA" => {
            let key = ed25519_dalek::VerifyingKey::from_public_key_pem(public_key_pem).map_err(|e| e.to_string())?;
            let sig = ed25519_dalek::Signature::from_slice(&signature).map_err(|e| e.to_string())?;
            key.verify(&payload, &sig).map_err(|e| e.to_string())?;
        }
        other => return Err(format!("unknown alg {other}")),
    }
    Ok(payload)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let envelope: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&args[1]).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let pem = std::fs::read_to_string(&args[2]).map_err(|e| e.to_string())?;
    let payload = open_envelope(&envelope, &pem)?;
    let license: serde_json::Value = serde_json::from_slice(&payload).map_err(|e| e.to_string())?; // 3. parse, only now
    // Then check machine_fingerprint, product, expires_at + grace_days, file_expires_at; for a signed validate
    // answer, that nonce, license_key and machine_fingerprint are those you sent.
    println!("{} {}", license["license_key"], license["expires_at"]);
    Ok(())
}
