//! Where a webhook may send: a URL Burrow will call on its users' behalf must not reach into the
//! network Burrow runs in (server-side request forgery), nor services that are no webhook
//! receiver. Checked when a webhook is saved and again by the sender before it connects (a
//! stored webhook may predate a rule) and after every DNS lookup, since a name may resolve
//! elsewhere later.

mod ports;
mod special_addresses;

use std::net::IpAddr;

use async_trait::async_trait;
use url::{Host, Url};

use crate::error::ValidationError;

pub use ports::AllowedPorts;
use special_addresses::special_address;

/// Longest webhook URL accepted.
pub const MAX_URL_CHARS: usize = 2_000;

/// What the operator allows webhooks to reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetPolicy {
    /// `BURROW_WEBHOOKS_ALLOW_PRIVATE`: loopback, private, link-local and other special-purpose
    /// addresses, and plain `http`, for receivers inside the operator's own network (and tests).
    pub allow_private: bool,
    /// `BURROW_WEBHOOKS_ALLOWED_PORTS`, whatever the addresses allowed.
    pub ports: AllowedPorts,
}

/// Looks host names up, for the check at save time. The sender resolves on its own, with the
/// same policy, right before it connects.
#[async_trait]
pub trait HostResolver: Send + Sync {
    /// The addresses `host` resolves to.
    ///
    /// # Errors
    /// Why the name did not resolve, to show the user.
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, String>;
}

impl TargetPolicy {
    /// Why `address` may not be called, if it may not.
    pub fn refusal(&self, address: IpAddr) -> Option<String> {
        if self.allow_private {
            return None;
        }
        special_address(address)
            .map(|special| format!("{address} is {special}, which webhooks may not call."))
    }

    /// Reads a webhook URL: absolute, `https` (or `http` where private targets are allowed), with
    /// a host and a port the policy allows, not too long; an address given literally must be
    /// one the policy allows.
    ///
    /// # Errors
    /// `Invalid` on `url`, saying why.
    pub fn url(&self, text: &str) -> Result<Url, ValidationError> {
        let invalid = |detail: String| ValidationError::invalid("url", detail);
        if text.chars().count() > MAX_URL_CHARS {
            return Err(ValidationError::too_long("url", MAX_URL_CHARS));
        }
        let url = Url::parse(text).map_err(|_| invalid("Enter a valid URL.".into()))?;
        match url.scheme() {
            "https" => {}
            "http" if self.allow_private => {}
            "http" => return Err(invalid("Webhook URLs must use https.".into())),
            _ => return Err(invalid("Enter a valid URL.".into())),
        }
        if let Some(address) = literal_address(&url)
            && let Some(refusal) = self.refusal(address)
        {
            return Err(invalid(refusal));
        }
        if url.host().is_none() {
            return Err(invalid("Enter a valid URL.".into()));
        }
        let port = url.port_or_known_default().unwrap_or(443);
        if let Some(refusal) = self.ports.refusal(port) {
            return Err(invalid(refusal));
        }
        Ok(url)
    }

    /// Checks where `url`'s host resolves now: every address must be allowed.
    ///
    /// # Errors
    /// `Invalid` on `url` when the name does not resolve or reaches a refused address.
    pub async fn check_resolved(
        &self,
        url: &Url,
        resolver: &dyn HostResolver,
    ) -> Result<(), ValidationError> {
        let invalid = |detail: String| ValidationError::invalid("url", detail);
        let Some(Host::Domain(host)) = url.host() else {
            return Ok(());
        };
        let port = url.port_or_known_default().unwrap_or(443);
        let addresses = resolver
            .resolve(host, port)
            .await
            .map_err(|error| invalid(format!("The host {host} does not resolve: {error}")))?;
        if addresses.is_empty() {
            return Err(invalid(format!("The host {host} does not resolve.")));
        }
        for address in addresses {
            if let Some(refusal) = self.refusal(address) {
                return Err(invalid(format!("{host} resolves to {refusal}")));
            }
        }
        Ok(())
    }
}

/// The address a URL names literally (`https://10.0.0.1/`, `https://[::1]/`), if it does.
fn literal_address(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        Host::Ipv4(address) => Some(IpAddr::V4(address)),
        Host::Ipv6(address) => Some(IpAddr::V6(address)),
        Host::Domain(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_purpose_addresses_are_refused_in_a_sentence_unless_private_ones_are_allowed() {
        let refusal =
            |policy: &TargetPolicy, address: &str| policy.refusal(address.parse().unwrap());
        let strict = TargetPolicy::default();
        assert_eq!(
            refusal(&strict, "169.254.169.254").as_deref(),
            Some("169.254.169.254 is a link-local address, which webhooks may not call.")
        );
        assert_eq!(
            refusal(&strict, "64:ff9b:1::a00:1").as_deref(),
            Some(
                "64:ff9b:1::a00:1 is a local-use NAT64 address carrying 10.0.0.1 (private), \
                 which webhooks may not call."
            )
        );
        assert_eq!(refusal(&strict, "2606:4700::1111"), None);
        let lenient = TargetPolicy {
            allow_private: true,
            ..TargetPolicy::default()
        };
        assert_eq!(refusal(&lenient, "127.0.0.1"), None);
    }

    #[test]
    fn urls_must_be_https_with_an_allowed_port_and_not_name_a_special_address() {
        let policy = TargetPolicy::default();
        assert!(policy.url("https://hooks.example.com/x").is_ok());
        for (url, detail) in [
            ("http://hooks.example.com/x", "https"),
            ("ftp://hooks.example.com/x", "valid URL"),
            ("not a url", "valid URL"),
            ("https://127.0.0.1/x", "loopback"),
            ("https://[::1]:8080/x", "loopback"),
            ("https://169.254.169.254/latest/meta-data", "link-local"),
            ("https://0x7f000001/", "loopback"),
            ("https://[64:ff9b:1::a00:1]/", "local-use NAT64"),
            ("https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", "Teredo"),
            ("https://example.com:22/", "not 22"),
            ("https://example.com:6379/", "Redis"),
            ("http://[::1]:443/", "https"),
        ] {
            let error = policy.url(url).unwrap_err();
            assert_eq!(error.attr.as_deref(), Some("url"));
            assert!(error.detail.contains(detail), "{url}: {}", error.detail);
        }
        assert!(policy.url("https://hooks.example.com:8443/x").is_ok());
        let allowing = TargetPolicy {
            allow_private: true,
            ..TargetPolicy::default()
        };
        assert!(allowing.url("http://127.0.0.1:9000/hook").is_ok());
        assert!(allowing.url("http://127.0.0.1/hook").is_ok());
        assert!(allowing.url("http://127.0.0.1:5432/").is_err());
        let listed = TargetPolicy {
            ports: "443".parse().unwrap(),
            ..TargetPolicy::default()
        };
        assert!(listed.url("https://hooks.example.com/x").is_ok());
        let error = listed.url("https://hooks.example.com:8443/x").unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (Some("url"), "Webhooks may call ports 443 only, not 8443.")
        );
        assert!(
            policy
                .url(&format!("https://a.com/{}", "x".repeat(MAX_URL_CHARS)))
                .is_err()
        );
    }

    struct Resolves(Vec<IpAddr>);

    #[async_trait]
    impl HostResolver for Resolves {
        async fn resolve(&self, _: &str, _: u16) -> Result<Vec<IpAddr>, String> {
            Ok(self.0.clone())
        }
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_private_address_is_refused() {
        let policy = TargetPolicy::default();
        let url = policy.url("https://internal.example.com/").unwrap();
        let private = Resolves(vec![
            "93.184.216.34".parse().unwrap(),
            "10.0.0.5".parse().unwrap(),
        ]);
        let error = policy.check_resolved(&url, &private).await.unwrap_err();
        assert!(
            error.detail.contains("10.0.0.5 is a private address"),
            "{}",
            error.detail
        );
        let public = Resolves(vec!["93.184.216.34".parse().unwrap()]);
        assert!(policy.check_resolved(&url, &public).await.is_ok());
        assert!(
            policy
                .check_resolved(&url, &Resolves(vec![]))
                .await
                .is_err()
        );
    }
}
