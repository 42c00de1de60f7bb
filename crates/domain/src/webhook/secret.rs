//! Signing secrets and signatures as the Standard Webhooks specification defines them, so
//! receivers verify Burrow's deliveries with the `standardwebhooks` libraries unchanged.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use rand::RngCore as _;
use sha2::Sha256;

/// The prefix Standard Webhooks gives symmetric secrets.
const PREFIX: &str = "whsec_";

/// Random bytes in a new secret: the specification allows 24 to 64.
const SECRET_BYTES: usize = 32;

/// A webhook's signing secret, `whsec_<base64 key>`. Shown to its owner once (on create and on
/// rotation); Debug never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    /// A new secret of 32 random bytes from the operating system's generator.
    pub fn generate() -> Self {
        let mut key = [0_u8; SECRET_BYTES];
        rand::rng().fill_bytes(&mut key);
        Self(format!("{PREFIX}{}", STANDARD.encode(key)))
    }

    /// A stored secret, as `generate` wrote it.
    pub fn from_stored(text: String) -> Self {
        Self(text)
    }

    /// The secret as its owner copies it into a receiver.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The key the text encodes (what follows the prefix, base64-decoded).
    fn key(&self) -> Vec<u8> {
        let encoded = self.0.strip_prefix(PREFIX).unwrap_or(&self.0);
        STANDARD
            .decode(encoded)
            .unwrap_or_else(|_| encoded.as_bytes().to_vec())
    }

    /// One `webhook-signature` entry, `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`.
    pub fn sign(&self, message_id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.key()).expect("HMAC accepts keys of any length");
        mac.update(message_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(…)")
    }
}

/// The `webhook-signature` header: one entry per secret in `secrets` (the current one, and the
/// one a rotation replaced while it is still honoured), space-separated as the specification
/// allows, so receivers still holding the old secret keep verifying.
pub fn signature_header(
    secrets: &[&WebhookSecret],
    message_id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign(message_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_the_specifications_test_vector() {
        let secret = WebhookSecret::from_stored("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD".into());
        assert_eq!(
            secret.sign(
                "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
                1_649_367_553,
                br#"{"email":"test@example.com","username":"test_user"}"#
            ),
            "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
        );
    }

    #[test]
    fn generated_secrets_are_prefixed_32_byte_keys_and_differ() {
        let (a, b) = (WebhookSecret::generate(), WebhookSecret::generate());
        assert!(a.expose().starts_with("whsec_"));
        assert_eq!(a.key().len(), 32);
        assert_ne!(a, b);
        assert_eq!(format!("{a:?}"), "WebhookSecret(…)");
    }

    #[test]
    fn a_rotation_signs_with_both_secrets() {
        let (new, old) = (WebhookSecret::generate(), WebhookSecret::generate());
        let header = signature_header(&[&new, &old], "msg_1", 10, b"{}");
        assert_eq!(
            header,
            format!(
                "{} {}",
                new.sign("msg_1", 10, b"{}"),
                old.sign("msg_1", 10, b"{}")
            )
        );
    }
}
