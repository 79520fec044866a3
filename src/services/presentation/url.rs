//! The check a `url` reference must pass (section 2.5: "Kind url carries a sanitized
//! absolute HTTP(S) URL; credentials, localhost/.local, and private/loopback/link-local/
//! unspecified/multicast literal IP targets are rejected").
//!
//! The check is deliberately stricter than a browser's parser, so that no two URL parsers
//! (the frontend's, the browser's, a fetcher's) can disagree about which host is meant:
//!
//! - The URL is ASCII only (internationalized names must be given in punycode), and holds
//!   only RFC 3986 characters: unreserved (`A-Z a-z 0-9 - . _ ~`), reserved
//!   (`: / ? # [ ] @ ! $ & ' ( ) * + , ; =`) and `%` followed by two hex digits. So no
//!   space, backslash, quote, `<`, `>`, `{`, `}`, `|`, `^` or backtick.
//! - It starts with `http://` or `https://` (scheme case-insensitive).
//! - The authority (up to the first `/`, `?` or `#`) holds no `@`: any userinfo, even
//!   empty, is refused as credentials.
//! - The port, when a `:` is present, is 1 to 65535 written in at most five digits.
//! - A bracketed host is an IPv6 literal without zone (std's strict `Ipv6Addr` syntax).
//! - Any other host is a DNS name: letters, digits, `-` and `_` in dot-separated labels of
//!   1 to 63 bytes, at most 253 bytes, one optional trailing dot; no `%`, so no
//!   percent-encoded host. `localhost`, `*.localhost`, `local` and `*.local` are refused,
//!   case-insensitively and with or without the trailing dot.
//! - A host whose last label looks numeric (all digits, or `0x` followed by hex digits) is
//!   what WHATWG parsers treat as an IPv4 address. It must then be exactly the canonical
//!   dotted-decimal form (four parts, no leading zeros, no trailing dot); decimal, octal,
//!   hex and short forms such as `2130706433`, `0177.0.0.1`, `0x7f.1` or `127.1` are
//!   refused outright, whichever address they would denote.
//! - `[` and `]` appear only around the host; `#` at most once.
//!
//! Literal addresses are refused by [`classify`]. Names that merely resolve to such
//! addresses through DNS cannot be recognized here; frontends expose the URL only after a
//! user click.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Longest DNS name, in bytes, without the trailing dot.
const MAX_HOST_NAME_BYTES: usize = 253;

/// Longest DNS label, in bytes.
const MAX_HOST_LABEL_BYTES: usize = 63;

/// Why a `url` reference was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlError {
    /// A character outside ASCII.
    NotAscii {
        /// Its byte offset.
        offset: usize,
    },
    /// An ASCII character that may not appear in a URL at all, or not where it is.
    ForbiddenCharacter {
        /// The character.
        character: char,
        /// Its byte offset.
        offset: usize,
    },
    /// A `%` not followed by two hex digits.
    BadPercentEncoding {
        /// The byte offset of the `%`.
        offset: usize,
    },
    /// The scheme is not `http` or `https`, or there is none.
    NotHttp,
    /// The scheme is not followed by `//` and an authority.
    NotAbsolute,
    /// The authority carries userinfo (`user:password@`).
    Credentials,
    /// The host is empty.
    EmptyHost,
    /// The port is empty, not decimal, zero or above 65535.
    BadPort,
    /// The host is not a well-formed DNS name.
    BadHostName,
    /// The host is `localhost`, a `.localhost` name or a `.local` name.
    LocalName,
    /// The host looks numeric but is not a canonical dotted-decimal IPv4 address.
    NonCanonicalIpv4,
    /// A bracketed host is not a well-formed IPv6 address, or carries a zone.
    BadIpv6,
    /// The host is a literal address of a refused class.
    BlockedAddress {
        /// The address as written.
        address: IpAddr,
        /// Why it is refused.
        class: AddressClass,
    },
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::NotAscii { offset } => {
                write!(f, "non-ASCII character at byte {offset} (use punycode)")
            }
            UrlError::ForbiddenCharacter { character, offset } => {
                write!(
                    f,
                    "character {character:?} at byte {offset} is not allowed there"
                )
            }
            UrlError::BadPercentEncoding { offset } => {
                write!(f, "`%` at byte {offset} is not followed by two hex digits")
            }
            UrlError::NotHttp => f.write_str("the scheme must be http or https"),
            UrlError::NotAbsolute => f.write_str("the scheme must be followed by `//` and a host"),
            UrlError::Credentials => f.write_str("it carries credentials (userinfo)"),
            UrlError::EmptyHost => f.write_str("the host is empty"),
            UrlError::BadPort => f.write_str("the port must be a number from 1 to 65535"),
            UrlError::BadHostName => f.write_str("the host is not a well-formed DNS name"),
            UrlError::LocalName => f.write_str("the host is a localhost or .local name"),
            UrlError::NonCanonicalIpv4 => f.write_str(
                "the host looks numeric but is not a canonical dotted-decimal IPv4 address",
            ),
            UrlError::BadIpv6 => f.write_str("the bracketed host is not a plain IPv6 address"),
            UrlError::BlockedAddress { address, class } => {
                write!(f, "the host {address} is a {class} address")
            }
        }
    }
}

impl std::error::Error for UrlError {}

/// The classes of literal address a `url` reference may not target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressClass {
    /// Private networks: 10/8, 172.16/12, 192.168/16, the shared address space 100.64/10,
    /// unique-local fc00::/7 and deprecated site-local fec0::/10.
    Private,
    /// Loopback: 127/8 and ::1.
    Loopback,
    /// Link-local: 169.254/16 and fe80::/10.
    LinkLocal,
    /// Unspecified: 0.0.0.0/8 ("this network") and ::.
    Unspecified,
    /// Multicast: 224/4 and ff00::/8.
    Multicast,
    /// Reserved: 240/4, the limited broadcast address 255.255.255.255 included.
    Reserved,
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressClass::Private => "private",
            AddressClass::Loopback => "loopback",
            AddressClass::LinkLocal => "link-local",
            AddressClass::Unspecified => "unspecified",
            AddressClass::Multicast => "multicast",
            AddressClass::Reserved => "reserved",
        })
    }
}

#[doc(hidden)]
/// The refused class `address` belongs to, or `None` for an address a reference may
/// target. IPv6 addresses that embed an IPv4 address (IPv4-mapped `::ffff:0:0/96`,
/// IPv4-compatible `::/96` and NAT64 `64:ff9b::/96`) are classified by the embedded
/// address.
pub fn classify(address: IpAddr) -> Option<AddressClass> {
    match address {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(address: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, _, _] = address.octets();
    match (a, b) {
        (0, _) => Some(AddressClass::Unspecified),
        (10, _) | (172, 16..=31) | (192, 168) | (100, 64..=127) => Some(AddressClass::Private),
        (127, _) => Some(AddressClass::Loopback),
        (169, 254) => Some(AddressClass::LinkLocal),
        (224..=239, _) => Some(AddressClass::Multicast),
        (240..=255, _) => Some(AddressClass::Reserved),
        _ => None,
    }
}

fn classify_v6(address: Ipv6Addr) -> Option<AddressClass> {
    let segments = address.segments();
    if address.is_unspecified() {
        return Some(AddressClass::Unspecified);
    }
    if address.is_loopback() {
        return Some(AddressClass::Loopback);
    }
    let embeds_v4 = matches!(
        segments,
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0, 0, _, _] | [0x64, 0xff9b, 0, 0, 0, 0, _, _]
    );
    if embeds_v4 {
        let [.., high, low] = segments;
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        return classify_v4(Ipv4Addr::new(a, b, c, d));
    }
    match segments[0] {
        0xfc00..=0xfdff | 0xfec0..=0xfeff => Some(AddressClass::Private),
        0xfe80..=0xfebf => Some(AddressClass::LinkLocal),
        0xff00..=0xffff => Some(AddressClass::Multicast),
        _ => None,
    }
}

/// Checks that `url` is an absolute HTTP(S) URL a `url` reference may carry, by the rules
/// of this module.
pub fn check_url(url: &str) -> Result<(), UrlError> {
    check_characters(url)?;
    let (scheme, rest) = url.split_once(':').ok_or(UrlError::NotHttp)?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(UrlError::NotHttp);
    }
    let after_slashes = rest.strip_prefix("//").ok_or(UrlError::NotAbsolute)?;
    let authority_start = scheme.len() + 3;
    let authority_len = after_slashes
        .find(['/', '?', '#'])
        .unwrap_or(after_slashes.len());
    let (authority, tail) = after_slashes.split_at(authority_len);
    check_tail(tail, authority_start + authority_len)?;
    if authority.contains('@') {
        return Err(UrlError::Credentials);
    }
    let (host, port) = split_host_port(authority, authority_start)?;
    if let Some(port) = port {
        check_port(port)?;
    }
    check_host(host)
}

/// Every byte is an RFC 3986 character, and every `%` starts a well-formed escape.
fn check_characters(url: &str) -> Result<(), UrlError> {
    let bytes = url.as_bytes();
    for (offset, &byte) in bytes.iter().enumerate() {
        if !byte.is_ascii() {
            return Err(UrlError::NotAscii { offset });
        }
        let allowed = byte.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&byte);
        if !allowed {
            return Err(UrlError::ForbiddenCharacter {
                character: char::from(byte),
                offset,
            });
        }
        if byte == b'%' {
            let escape = bytes.get(offset + 1..offset + 3);
            if !escape.is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) {
                return Err(UrlError::BadPercentEncoding { offset });
            }
        }
    }
    Ok(())
}

/// The path, query and fragment hold no brackets and at most one `#`. `start` is the
/// tail's byte offset in the URL.
fn check_tail(tail: &str, start: usize) -> Result<(), UrlError> {
    let mut seen_hash = false;
    for (index, character) in tail.char_indices() {
        let forbidden = match character {
            '[' | ']' => true,
            '#' => std::mem::replace(&mut seen_hash, true),
            _ => false,
        };
        if forbidden {
            return Err(UrlError::ForbiddenCharacter {
                character,
                offset: start + index,
            });
        }
    }
    Ok(())
}

/// Splits an authority without userinfo into host and optional port. `start` is the
/// authority's byte offset in the URL.
fn split_host_port(authority: &str, start: usize) -> Result<(&str, Option<&str>), UrlError> {
    if authority.starts_with('[') {
        let close = authority.find(']').ok_or(UrlError::BadIpv6)?;
        let (host, after) = authority.split_at(close + 1);
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, Some(port))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(UrlError::ForbiddenCharacter {
                character: after.chars().next().unwrap_or(']'),
                offset: start + close + 1,
            }),
        };
    }
    if let Some(offset) = authority.find(['[', ']']) {
        return Err(UrlError::ForbiddenCharacter {
            character: char::from(authority.as_bytes()[offset]),
            offset: start + offset,
        });
    }
    Ok(match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

fn check_port(port: &str) -> Result<(), UrlError> {
    if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UrlError::BadPort);
    }
    match port.parse::<u32>() {
        Ok(1..=65535) => Ok(()),
        _ => Err(UrlError::BadPort),
    }
}

fn check_host(host: &str) -> Result<(), UrlError> {
    if host.is_empty() {
        return Err(UrlError::EmptyHost);
    }
    if let Some(inner) = host.strip_prefix('[') {
        let literal = inner.strip_suffix(']').ok_or(UrlError::BadIpv6)?;
        let address: Ipv6Addr = literal.parse().map_err(|_| UrlError::BadIpv6)?;
        return check_address(IpAddr::V6(address));
    }
    let name = host.strip_suffix('.').unwrap_or(host);
    let labels: Vec<&str> = name.split('.').collect();
    let last = labels.last().copied().unwrap_or_default();
    if looks_numeric(last) {
        // WHATWG parsers read this host as an IPv4 address; only the canonical form,
        // which every parser reads alike, is admitted.
        let address: Ipv4Addr = host.parse().map_err(|_| UrlError::NonCanonicalIpv4)?;
        return check_address(IpAddr::V4(address));
    }
    let well_formed = name.len() <= MAX_HOST_NAME_BYTES
        && labels.iter().all(|label| {
            (1..=MAX_HOST_LABEL_BYTES).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !well_formed {
        return Err(UrlError::BadHostName);
    }
    let last = last.to_ascii_lowercase();
    if last == "localhost" || last == "local" {
        return Err(UrlError::LocalName);
    }
    Ok(())
}

/// True for a label a WHATWG parser reads as an IPv4 number: decimal or octal digits, or
/// `0x` followed by hex digits (possibly none).
fn looks_numeric(label: &str) -> bool {
    if let Some(hex) = label
        .strip_prefix("0x")
        .or_else(|| label.strip_prefix("0X"))
    {
        return hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit())
}

fn check_address(address: IpAddr) -> Result<(), UrlError> {
    match classify(address) {
        Some(class) => Err(UrlError::BlockedAddress { address, class }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_labels_are_recognized_like_whatwg() {
        for numeric in ["1", "0177", "0x7f", "0X", "0xAbC", "2130706433"] {
            assert!(looks_numeric(numeric), "{numeric}");
        }
        for name in ["", "com", "1e3", "0x7g", "x1", "1a"] {
            assert!(!looks_numeric(name), "{name}");
        }
    }

    #[test]
    fn embedded_ipv4_addresses_are_classified_by_the_embedded_address() {
        let mapped: Ipv6Addr = "::ffff:10.1.2.3".parse().unwrap();
        assert_eq!(classify(IpAddr::V6(mapped)), Some(AddressClass::Private));
        let nat64: Ipv6Addr = "64:ff9b::a9fe:1".parse().unwrap();
        assert_eq!(classify(IpAddr::V6(nat64)), Some(AddressClass::LinkLocal));
        let public: Ipv6Addr = "::ffff:8.8.8.8".parse().unwrap();
        assert_eq!(classify(IpAddr::V6(public)), None);
    }

    #[test]
    fn ipv4_class_boundaries() {
        let class = |text: &str| classify(IpAddr::V4(text.parse().unwrap()));
        assert_eq!(class("172.15.255.255"), None);
        assert_eq!(class("172.16.0.0"), Some(AddressClass::Private));
        assert_eq!(class("172.31.255.255"), Some(AddressClass::Private));
        assert_eq!(class("172.32.0.0"), None);
        assert_eq!(class("100.63.255.255"), None);
        assert_eq!(class("100.64.0.1"), Some(AddressClass::Private));
        assert_eq!(class("100.128.0.0"), None);
        assert_eq!(class("223.255.255.255"), None);
        assert_eq!(class("224.0.0.1"), Some(AddressClass::Multicast));
        assert_eq!(class("239.255.255.255"), Some(AddressClass::Multicast));
        assert_eq!(class("255.255.255.255"), Some(AddressClass::Reserved));
        assert_eq!(class("1.0.0.0"), None);
        assert_eq!(class("0.255.255.255"), Some(AddressClass::Unspecified));
    }
}
