//! The addresses no webhook may call: the IANA IPv4 and IPv6 Special-Purpose Address
//! Registries (RFC 6890 and the RFCs that updated them), multicast, the deprecated IPv6 ranges
//! still routed somewhere, and every IPv6 address outside global unicast (`2000::/3`), written
//! as tables that read like the registries. IPv6 forms that carry an IPv4 address are judged by
//! that address too: an IPv4 address written as IPv6 (mapped, or behind the well-known NAT64
//! prefix a DNS64 resolver hands out) by it alone, the tunnelling and translation ranges
//! refused whatever they carry, with what they carry named.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A range of the IPv4 registries: the addresses sharing the first `length` bits of `prefix`.
struct V4Range {
    prefix: Ipv4Addr,
    length: u8,
    name: &'static str,
}

const fn v4(prefix: [u8; 4], length: u8, name: &'static str) -> V4Range {
    let [a, b, c, d] = prefix;
    V4Range {
        prefix: Ipv4Addr::new(a, b, c, d),
        length,
        name,
    }
}

/// Every special-purpose IPv4 range, and multicast; none is called.
#[rustfmt::skip]
const V4_RANGES: &[V4Range] = &[
    v4([0, 0, 0, 0],         8,  "\"this network\""),              // RFC 791
    v4([10, 0, 0, 0],        8,  "private"),                       // RFC 1918
    v4([100, 64, 0, 0],      10, "shared (carrier-grade NAT)"),    // RFC 6598
    v4([127, 0, 0, 0],       8,  "loopback"),                      // RFC 1122
    v4([169, 254, 0, 0],     16, "link-local"),                    // RFC 3927
    v4([172, 16, 0, 0],      12, "private"),                       // RFC 1918
    v4([192, 0, 0, 0],       24, "IETF protocol assignment"),      // RFC 6890
    v4([192, 0, 2, 0],       24, "documentation"),                 // RFC 5737
    v4([192, 31, 196, 0],    24, "AS112"),                         // RFC 7535
    v4([192, 52, 193, 0],    24, "AMT"),                           // RFC 7450
    v4([192, 88, 99, 0],     24, "deprecated 6to4 relay anycast"), // RFC 7526
    v4([192, 168, 0, 0],     16, "private"),                       // RFC 1918
    v4([192, 175, 48, 0],    24, "AS112"),                         // RFC 7534
    v4([198, 18, 0, 0],      15, "benchmarking"),                  // RFC 2544
    v4([198, 51, 100, 0],    24, "documentation"),                 // RFC 5737
    v4([203, 0, 113, 0],     24, "documentation"),                 // RFC 5737
    v4([224, 0, 0, 0],       4,  "multicast"),                     // RFC 5771
    v4([240, 0, 0, 0],       4,  "reserved"),                      // RFC 1112
    v4([255, 255, 255, 255], 32, "limited broadcast"),             // RFC 919
];

/// Where an IPv6 range keeps the IPv4 address it carries.
#[derive(Clone, Copy)]
enum Carried {
    /// The last 32 bits (mapped, compatible, SIIT, NAT64).
    Last32,
    /// Bits 16 to 47 (6to4).
    SixToFour,
    /// The last 32 bits inverted: Teredo's obfuscated client address.
    TeredoClient,
}

/// How a range of the IPv6 tables is judged.
#[derive(Clone, Copy)]
enum Judged {
    /// Never called.
    Refused,
    /// Never called; the IPv4 address it carries is named in the refusal.
    RefusedCarrying(Carried),
    /// An IPv4 address written as IPv6: judged by that address alone.
    AsIpv4(Carried),
}

/// A range of the IPv6 tables: the addresses sharing the first `length` bits of `prefix`.
struct V6Range {
    prefix: Ipv6Addr,
    length: u8,
    name: &'static str,
    judged: Judged,
}

const fn v6(prefix: [u16; 8], length: u8, name: &'static str, judged: Judged) -> V6Range {
    let [a, b, c, d, e, f, g, h] = prefix;
    V6Range {
        prefix: Ipv6Addr::new(a, b, c, d, e, f, g, h),
        length,
        name,
        judged,
    }
}

use Carried::{Last32, SixToFour, TeredoClient};
use Judged::{AsIpv4, Refused, RefusedCarrying};

/// Every special-purpose IPv6 range, the deprecated ones, and multicast. An address in several
/// is judged by the longest (`::1/128` before `::/96`).
#[rustfmt::skip]
const V6_RANGES: &[V6Range] = &[
    v6([0, 0, 0, 0, 0, 0, 0, 0],          128, "unspecified",              Refused),                      // RFC 4291
    v6([0, 0, 0, 0, 0, 0, 0, 1],          128, "loopback",                 Refused),                      // RFC 4291
    v6([0, 0, 0, 0, 0, 0, 0, 0],          96,  "IPv4-compatible",          RefusedCarrying(Last32)),      // RFC 4291, deprecated
    v6([0, 0, 0, 0, 0, 0xffff, 0, 0],     96,  "IPv4-mapped",              AsIpv4(Last32)),               // RFC 4291
    v6([0, 0, 0, 0, 0xffff, 0, 0, 0],     96,  "SIIT (IPv4-translated)",   RefusedCarrying(Last32)),      // RFC 2765
    v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0],  96,  "NAT64",                    AsIpv4(Last32)),               // RFC 6052
    v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0],  48,  "local-use NAT64",          RefusedCarrying(Last32)),      // RFC 8215
    v6([0x100, 0, 0, 0, 0, 0, 0, 0],      64,  "discard-only",             Refused),                      // RFC 6666
    v6([0x100, 0, 0, 1, 0, 0, 0, 0],      64,  "dummy",                    Refused),                      // RFC 9780
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0],     23,  "IETF protocol assignment", Refused),                      // RFC 2928
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0],     32,  "Teredo",                   RefusedCarrying(TeredoClient)), // RFC 4380
    v6([0x2001, 2, 0, 0, 0, 0, 0, 0],     48,  "benchmarking",             Refused),                      // RFC 5180
    v6([0x2001, 0x10, 0, 0, 0, 0, 0, 0],  28,  "deprecated ORCHID",        Refused),                      // RFC 4843
    v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0],  28,  "ORCHIDv2",                 Refused),                      // RFC 7343
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32,  "documentation",            Refused),                      // RFC 3849
    v6([0x2002, 0, 0, 0, 0, 0, 0, 0],     16,  "6to4",                     RefusedCarrying(SixToFour)),   // RFC 3056, 7526
    v6([0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0], 48, "AS112",                 Refused),                      // RFC 7534
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0],     20,  "documentation",            Refused),                      // RFC 9637
    v6([0x5f00, 0, 0, 0, 0, 0, 0, 0],     16,  "segment routing (SRv6) SID", Refused),                    // RFC 9602
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0],     7,   "private (unique local)",   Refused),                      // RFC 4193
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0],     10,  "link-local",               Refused),                      // RFC 4291
    v6([0xfec0, 0, 0, 0, 0, 0, 0, 0],     10,  "site-local",               Refused),                      // RFC 3879, deprecated
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0],     8,   "multicast",                Refused),                      // RFC 4291
];

/// Global unicast (RFC 4291): the only IPv6 space the internet routes. An address outside it
/// and in no range above is unallocated.
const GLOBAL_UNICAST: V6Range = v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3, "", Refused);

/// Why an address is not one a webhook may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecialAddress {
    /// The registry's name for its range (`loopback`, `6to4`, …).
    pub name: &'static str,
    /// The IPv4 address a refused IPv6 range carries, with what kind of address it is when it
    /// is itself special.
    pub carrying: Option<(Ipv4Addr, Option<&'static str>)>,
}

impl fmt::Display for SpecialAddress {
    /// `a loopback address`, `a 6to4 address carrying 10.0.0.1 (private)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let article = if self
            .name
            .starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U'])
        {
            "an"
        } else {
            "a"
        };
        write!(f, "{article} {} address", self.name)?;
        match self.carrying {
            Some((v4, Some(kind))) => write!(f, " carrying {v4} ({kind})"),
            Some((v4, None)) => write!(f, " carrying {v4}"),
            None => Ok(()),
        }
    }
}

/// What special-purpose range `address` is in, if any.
pub fn special_address(address: IpAddr) -> Option<SpecialAddress> {
    match address {
        IpAddr::V4(v4) => special_v4(v4).map(|name| SpecialAddress {
            name,
            carrying: None,
        }),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(address: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(address);
    V4_RANGES
        .iter()
        .filter(|range| {
            let mask = u32::MAX
                .checked_shl(32 - u32::from(range.length))
                .unwrap_or(0);
            bits & mask == u32::from(range.prefix)
        })
        .max_by_key(|range| range.length)
        .map(|range| range.name)
}

fn in_v6(range: &V6Range, bits: u128) -> bool {
    let mask = u128::MAX
        .checked_shl(128 - u32::from(range.length))
        .unwrap_or(0);
    bits & mask == u128::from(range.prefix)
}

fn special_v6(address: Ipv6Addr) -> Option<SpecialAddress> {
    let bits = u128::from(address);
    let Some(range) = V6_RANGES
        .iter()
        .filter(|range| in_v6(range, bits))
        .max_by_key(|range| range.length)
    else {
        return (!in_v6(&GLOBAL_UNICAST, bits)).then_some(SpecialAddress {
            name: "unallocated (not global unicast)",
            carrying: None,
        });
    };
    match range.judged {
        Refused => Some(SpecialAddress {
            name: range.name,
            carrying: None,
        }),
        RefusedCarrying(carried) => {
            let v4 = carried_v4(carried, bits);
            Some(SpecialAddress {
                name: range.name,
                carrying: Some((v4, special_v4(v4))),
            })
        }
        AsIpv4(carried) => special_address(IpAddr::V4(carried_v4(carried, bits))),
    }
}

fn carried_v4(carried: Carried, bits: u128) -> Ipv4Addr {
    // `as u32` keeps the low 32 bits, where each form's address ends once shifted.
    let v4 = match carried {
        Last32 => bits as u32,
        SixToFour => (bits >> 80) as u32,
        TeredoClient => !(bits as u32),
    };
    Ipv4Addr::from(v4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusal of `address`, as the policy words it.
    fn judged(address: &str) -> Option<String> {
        special_address(address.parse().unwrap()).map(|special| special.to_string())
    }

    /// Each range: an address inside it, what it is called, and a neighbour just outside that
    /// is public (`None` where every neighbour is special too).
    #[test]
    fn every_ipv4_range_refuses_its_addresses_and_not_its_neighbours() {
        for (inside, name, outside) in [
            ("0.1.2.3", "a \"this network\" address", Some("1.0.0.0")),
            ("10.255.255.255", "a private address", Some("11.0.0.0")),
            (
                "100.127.255.255",
                "a shared (carrier-grade NAT) address",
                Some("100.128.0.0"),
            ),
            (
                "100.64.0.0",
                "a shared (carrier-grade NAT) address",
                Some("100.63.255.255"),
            ),
            ("127.0.0.1", "a loopback address", Some("128.0.0.0")),
            (
                "169.254.169.254",
                "a link-local address",
                Some("169.255.0.0"),
            ),
            ("172.31.255.255", "a private address", Some("172.32.0.0")),
            ("172.16.0.0", "a private address", Some("172.15.255.255")),
            (
                "192.0.0.9",
                "an IETF protocol assignment address",
                Some("192.0.1.0"),
            ),
            ("192.0.2.1", "a documentation address", Some("192.0.3.0")),
            ("192.31.196.1", "an AS112 address", Some("192.31.197.0")),
            ("192.52.193.1", "an AMT address", Some("192.52.194.0")),
            (
                "192.88.99.1",
                "a deprecated 6to4 relay anycast address",
                Some("192.88.100.0"),
            ),
            ("192.168.1.1", "a private address", Some("192.169.0.0")),
            ("192.175.48.1", "an AS112 address", Some("192.175.49.0")),
            (
                "198.19.255.255",
                "a benchmarking address",
                Some("198.20.0.0"),
            ),
            (
                "198.51.100.7",
                "a documentation address",
                Some("198.51.101.0"),
            ),
            (
                "203.0.113.7",
                "a documentation address",
                Some("203.0.114.0"),
            ),
            ("224.0.0.1", "a multicast address", Some("223.255.255.255")),
            ("239.255.255.255", "a multicast address", None),
            ("240.0.0.1", "a reserved address", None),
            ("255.255.255.255", "a limited broadcast address", None),
        ] {
            assert_eq!(judged(inside).as_deref(), Some(name), "{inside}");
            if let Some(outside) = outside {
                assert_eq!(judged(outside), None, "{outside}");
            }
        }
    }

    #[test]
    fn every_ipv6_range_refuses_its_addresses_and_not_its_neighbours() {
        for (inside, name, outside) in [
            ("::", "an unspecified address", None),
            ("::1", "a loopback address", None),
            (
                "::8.8.8.8",
                "an IPv4-compatible address carrying 8.8.8.8",
                None,
            ),
            (
                "::ffff:0:8.8.8.8",
                "a SIIT (IPv4-translated) address carrying 8.8.8.8",
                None,
            ),
            (
                "64:ff9b:1::a00:1",
                "a local-use NAT64 address carrying 10.0.0.1 (private)",
                None,
            ),
            (
                "64:ff9b:1:ffff::808:808",
                "a local-use NAT64 address carrying 8.8.8.8",
                None,
            ),
            ("100::1", "a discard-only address", None),
            ("100:0:0:1::1", "a dummy address", None),
            (
                "2001:1::1",
                "an IETF protocol assignment address",
                Some("2001:200::1"),
            ),
            (
                "2001:1ff::1",
                "an IETF protocol assignment address",
                Some("2001:200::1"),
            ),
            (
                "2001::1",
                "a Teredo address carrying 255.255.255.254 (reserved)",
                None,
            ),
            (
                "2001:0:4136:e378:8000:63bf:f5ff:fffe",
                "a Teredo address carrying 10.0.0.1 (private)",
                None,
            ),
            (
                "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
                "a Teredo address carrying 8.8.8.8",
                None,
            ),
            ("2001:2::1", "a benchmarking address", None),
            ("2001:10::1", "a deprecated ORCHID address", None),
            ("2001:20::1", "an ORCHIDv2 address", None),
            (
                "2001:db8::1",
                "a documentation address",
                Some("2001:db9::1"),
            ),
            (
                "2002:a00:1::",
                "a 6to4 address carrying 10.0.0.1 (private)",
                Some("2003::1"),
            ),
            (
                "2002:808:808::",
                "a 6to4 address carrying 8.8.8.8",
                Some("2001:ffff::1"),
            ),
            (
                "2620:4f:8000::1",
                "an AS112 address",
                Some("2620:4f:8001::1"),
            ),
            (
                "3fff:fff::1",
                "a documentation address",
                Some("3fff:1000::1"),
            ),
            ("5f00::1", "a segment routing (SRv6) SID address", None),
            ("fd00:ec2::254", "a private (unique local) address", None),
            ("fc00::1", "a private (unique local) address", None),
            ("fe80::1", "a link-local address", None),
            ("febf::1", "a link-local address", None),
            ("fec0::1", "a site-local address", None),
            ("feff::1", "a site-local address", None),
            ("ff02::1", "a multicast address", None),
            (
                "4000::1",
                "an unallocated (not global unicast) address",
                Some("3fff:ffff::1"),
            ),
            (
                "1fff::1",
                "an unallocated (not global unicast) address",
                Some("2606:4700::1111"),
            ),
        ] {
            assert_eq!(judged(inside).as_deref(), Some(name), "{inside}");
            if let Some(outside) = outside {
                assert_eq!(judged(outside), None, "{outside}");
            }
        }
    }

    #[test]
    fn ipv4_written_as_ipv6_is_judged_as_the_ipv4_address() {
        assert_eq!(
            judged("::ffff:127.0.0.1").as_deref(),
            Some("a loopback address")
        );
        assert_eq!(
            judged("::ffff:169.254.169.254").as_deref(),
            Some("a link-local address")
        );
        assert_eq!(
            judged("64:ff9b::a00:1").as_deref(),
            Some("a private address")
        );
        assert_eq!(
            judged("64:ff9b::c0a8:101").as_deref(),
            Some("a private address")
        );
        assert_eq!(judged("::ffff:8.8.8.8"), None);
        assert_eq!(judged("64:ff9b::808:808"), None);
    }
}
