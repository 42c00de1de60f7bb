//! Where a webhook may send: a URL Burrow will call on its users' behalf must not reach into the
//! network Burrow runs in (server-side request forgery). Checked when a webhook is saved and
//! again by the sender after every DNS lookup, since a name may resolve elsewhere later.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use async_trait::async_trait;
use url::{Host, Url};

use crate::error::{ValidationCode, ValidationError};

/// Longest webhook URL accepted.
pub const MAX_URL_CHARS: usize = 2_000;

/// What the operator allows webhooks to reach beyond public HTTPS addresses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TargetPolicy {
    /// `BURROW_WEBHOOKS_ALLOW_PRIVATE`: loopback, private, link-local and other non-public
    /// addresses, and plain `http`, for receivers inside the operator's own network (and tests).
    pub allow_private: bool,
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
        non_public(address)
            .map(|kind| format!("{address} is a {kind} address, which webhooks may not call."))
    }

    /// Reads a webhook URL: absolute, `https` (or `http` where private targets are allowed), with
    /// a host, not too long; an address given literally must be one the policy allows.
    ///
    /// # Errors
    /// `Invalid` on `url`, saying why.
    pub fn url(&self, text: &str) -> Result<Url, ValidationError> {
        let invalid =
            |detail: String| ValidationError::field("url", ValidationCode::Invalid, detail);
        if text.chars().count() > MAX_URL_CHARS {
            return Err(ValidationError::field(
                "url",
                ValidationCode::MaxLength,
                format!("Ensure this field has no more than {MAX_URL_CHARS} characters."),
            ));
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
        let invalid =
            |detail: String| ValidationError::field("url", ValidationCode::Invalid, detail);
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
pub fn literal_address(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        Host::Ipv4(address) => Some(IpAddr::V4(address)),
        Host::Ipv6(address) => Some(IpAddr::V6(address)),
        Host::Domain(_) => None,
    }
}

/// What kind of non-public address `address` is, if it is one: anything but a globally
/// routable unicast address (cloud metadata services sit in link-local space).
fn non_public(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(address: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = address.octets();
    Some(match (a, b, c) {
        (0, ..) => "unspecified",
        (127, ..) => "loopback",
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => "private",
        (169, 254, _) => "link-local",
        (100, 64..=127, _) => "shared (carrier-grade NAT)",
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (198, 18..=19, _) => {
            "reserved"
        }
        (224..=239, ..) => "multicast",
        (240..=255, ..) => "reserved",
        _ => return None,
    })
}

fn non_public_v6(address: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = address.to_ipv4_mapped() {
        return non_public_v4(v4);
    }
    let segments = address.segments();
    Some(match segments {
        [0, 0, 0, 0, 0, 0, 0, 0] => "unspecified",
        [0, 0, 0, 0, 0, 0, 0, 1] => "loopback",
        // NAT64 (64:ff9b::/96) and IPv4-compatible (::/96) addresses carry an IPv4 one.
        [0x64, 0xff9b, 0, 0, 0, 0, ..] | [0, 0, 0, 0, 0, 0, ..] => {
            let [.., high, low] = segments;
            let embedded = Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
            return non_public_v4(embedded).or(Some("reserved"));
        }
        [first, ..] if first & 0xfe00 == 0xfc00 => "private (unique local)",
        [first, ..] if first & 0xffc0 == 0xfe80 => "link-local",
        [first, ..] if first & 0xff00 == 0xff00 => "multicast",
        [0x2001, 0x0db8, ..] => "reserved",
        // 6to4 carries an IPv4 address in its second and third segments.
        [0x2002, high, low, ..] => {
            let embedded = Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
            return non_public_v4(embedded);
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(address: &str) -> bool {
        TargetPolicy::default()
            .refusal(address.parse().unwrap())
            .is_some()
    }

    #[test]
    fn non_public_addresses_are_refused() {
        for address in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:a00:1::",
            "::127.0.0.1",
        ] {
            assert!(refused(address), "{address} should be refused");
        }
    }

    #[test]
    fn public_addresses_are_allowed() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "2606:4700::1111",
            "2002:0808:0808::",
        ] {
            assert!(!refused(address), "{address} should be allowed");
        }
    }

    #[test]
    fn urls_must_be_https_and_not_name_a_private_address() {
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
        ] {
            let error = policy.url(url).unwrap_err();
            assert_eq!(error.attr.as_deref(), Some("url"));
            assert!(error.detail.contains(detail), "{url}: {}", error.detail);
        }
        let allowing = TargetPolicy {
            allow_private: true,
        };
        assert!(allowing.url("http://127.0.0.1:9000/hook").is_ok());
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
