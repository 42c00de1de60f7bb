//! Which ports webhooks may call. By default 443, 80 and the unprivileged range, except the
//! ports of services that are no webhook receiver: those the Fetch standard forbids browsers
//! (its "bad ports", against cross-protocol requests) and the data stores and control planes
//! commonly left listening without authentication. Over `https` such a service sees a TLS
//! handshake first and cannot be driven, but refusing them keeps Burrow from knocking on them
//! at all (or telling a tenant, through a delivery's error, whether they answer). An operator
//! may list the ports instead (`BURROW_WEBHOOKS_ALLOWED_PORTS`).

use std::ops::RangeInclusive;
use std::str::FromStr;
use std::sync::Arc;

/// The unprivileged ports, allowed by default with 443 and 80.
const UNPRIVILEGED: RangeInclusive<u16> = 1024..=65535;

/// Ports in the unprivileged range refused by default: (first, last, service).
const SERVICE_PORTS: &[(u16, u16, &str)] = &[
    (1433, 1433, "SQL Server"),
    (1521, 1521, "Oracle"),
    (1719, 1720, "H.323"),
    (1723, 1723, "PPTP"),
    (2049, 2049, "NFS"),
    (2375, 2376, "Docker"),
    (2379, 2380, "etcd"),
    (3306, 3306, "MySQL"),
    (3389, 3389, "RDP"),
    (3659, 3659, "Apple SASL"),
    (4045, 4045, "NFS lock"),
    (4190, 4190, "ManageSieve"),
    (5060, 5061, "SIP"),
    (5432, 5432, "PostgreSQL"),
    (5672, 5672, "AMQP"),
    (6000, 6000, "X11"),
    (6379, 6379, "Redis"),
    (6443, 6443, "Kubernetes API"),
    (6566, 6566, "SANE"),
    (6665, 6669, "IRC"),
    (6697, 6697, "IRC"),
    (9042, 9042, "Cassandra"),
    (9092, 9092, "Kafka"),
    (9200, 9200, "Elasticsearch"),
    (9300, 9300, "Elasticsearch"),
    (10080, 10080, "Amanda"),
    (10250, 10250, "kubelet"),
    (11211, 11211, "memcached"),
    (27017, 27017, "MongoDB"),
];

/// The ports webhooks may call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AllowedPorts {
    /// 443, 80, and 1024–65535 except the services' ports above.
    #[default]
    Default,
    /// `BURROW_WEBHOOKS_ALLOWED_PORTS`: these and no others.
    Listed(Arc<[RangeInclusive<u16>]>),
}

impl AllowedPorts {
    /// Why `port` may not be called, if it may not.
    pub fn refusal(&self, port: u16) -> Option<String> {
        match self {
            Self::Default => {
                if let Some((.., service)) = SERVICE_PORTS
                    .iter()
                    .find(|(first, last, _)| (*first..=*last).contains(&port))
                {
                    return Some(format!("Webhooks may not call port {port} ({service})."));
                }
                let allowed = port == 443 || port == 80 || UNPRIVILEGED.contains(&port);
                (!allowed).then(|| {
                    format!("Webhooks may call port 443, 80 or 1024 to 65535, not {port}.")
                })
            }
            Self::Listed(ranges) => {
                (!ranges.iter().any(|range| range.contains(&port))).then(|| {
                    format!(
                        "Webhooks may call ports {} only, not {port}.",
                        written(ranges)
                    )
                })
            }
        }
    }
}

/// A list as the setting is written: `443, 8000-8999`.
fn written(ranges: &[RangeInclusive<u16>]) -> String {
    let items: Vec<String> = ranges
        .iter()
        .map(|range| {
            if range.start() == range.end() {
                range.start().to_string()
            } else {
                format!("{}-{}", range.start(), range.end())
            }
        })
        .collect();
    items.join(", ")
}

impl FromStr for AllowedPorts {
    type Err = String;

    /// `443,8000-8999`: ports from 1 to 65535 and inclusive ranges of them, comma-separated.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let port = |text: &str| match text.parse::<u16>() {
            Ok(0) | Err(_) => Err(format!("{text:?} is not a port from 1 to 65535")),
            Ok(port) => Ok(port),
        };
        let ranges = text
            .split(',')
            .map(|item| {
                let item = item.trim();
                let (first, last) = item.split_once('-').unwrap_or((item, item));
                let (first, last) = (port(first.trim())?, port(last.trim())?);
                if first > last {
                    return Err(format!("{item:?} is an empty range"));
                }
                Ok(first..=last)
            })
            .collect::<Result<Arc<[_]>, String>>()?;
        Ok(Self::Listed(ranges))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_default_https_http_and_unprivileged_ports_are_allowed_but_services() {
        let ports = AllowedPorts::Default;
        for allowed in [443, 80, 1024, 8080, 8443, 65535] {
            assert_eq!(ports.refusal(allowed), None, "{allowed}");
        }
        for (refused, detail) in [
            (
                22,
                "Webhooks may call port 443, 80 or 1024 to 65535, not 22.",
            ),
            (0, "Webhooks may call port 443, 80 or 1024 to 65535, not 0."),
            (
                1023,
                "Webhooks may call port 443, 80 or 1024 to 65535, not 1023.",
            ),
            (6379, "Webhooks may not call port 6379 (Redis)."),
            (5432, "Webhooks may not call port 5432 (PostgreSQL)."),
            (11211, "Webhooks may not call port 11211 (memcached)."),
            (6667, "Webhooks may not call port 6667 (IRC)."),
        ] {
            assert_eq!(ports.refusal(refused).as_deref(), Some(detail));
        }
    }

    #[test]
    fn an_operators_list_allows_exactly_its_ports() {
        let ports: AllowedPorts = "443, 6379,8000-8999".parse().unwrap();
        for allowed in [443, 6379, 8000, 8999] {
            assert_eq!(ports.refusal(allowed), None, "{allowed}");
        }
        assert_eq!(
            ports.refusal(80).as_deref(),
            Some("Webhooks may call ports 443, 6379, 8000-8999 only, not 80.")
        );
        assert_eq!(ports.refusal(9000).map(|_| ()), Some(()));
    }

    #[test]
    fn a_list_of_anything_but_ports_and_ranges_is_refused() {
        for (text, error) in [
            ("", "\"\" is not a port from 1 to 65535"),
            ("443,", "\"\" is not a port from 1 to 65535"),
            ("0", "\"0\" is not a port from 1 to 65535"),
            ("65536", "\"65536\" is not a port from 1 to 65535"),
            ("https", "\"https\" is not a port from 1 to 65535"),
            ("9000-8000", "\"9000-8000\" is an empty range"),
            ("1-2-3", "\"2-3\" is not a port from 1 to 65535"),
        ] {
            assert_eq!(text.parse::<AllowedPorts>().unwrap_err(), error, "{text}");
        }
    }
}
