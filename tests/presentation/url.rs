//! The `url` reference check, as a table.

use octet_host::services::presentation::{check_url, AddressClass, UrlError};
// ---------------------------------------------------------------------------
// URL check.
// ---------------------------------------------------------------------------

#[test]
fn url_check_table() {
    use AddressClass::*;
    let blocked = |address: &str, class| UrlError::BlockedAddress {
        address: address.parse().unwrap(),
        class,
    };
    let forbidden = |character, offset| UrlError::ForbiddenCharacter { character, offset };
    let accepted = [
        "https://example.com",
        "http://example.com/",
        "HTTPS://Example.COM/Path?q=1#frag",
        "https://example.com:8443/a/b",
        "https://example.com:65535/",
        "https://example.com:1/",
        "https://sub.example.co.uk/a%20b?x=%2F",
        "https://xn--bcher-kva.example/",
        "https://example.com./",
        "https://example.com/#a@b",
        "https://example.com/path?x=a:b@c&y=(1)",
        "https://my_host.example.com/",
        "https://8.8.8.8/",
        "https://172.32.0.1/",
        "https://100.128.0.1/",
        "https://[2606:4700:4700::1111]:443/dns",
        "http://[::ffff:8.8.8.8]/",
        "https://localhost.example.com/",
        "https://local.example/",
        "https://1e3.example/",
    ];
    for url in accepted {
        assert_eq!(check_url(url), Ok(()), "{url}");
    }
    let refused = [
        ("ftp://example.com", UrlError::NotHttp),
        ("javascript:alert(1)", UrlError::NotHttp),
        ("example.com", UrlError::NotHttp),
        ("//example.com/", UrlError::NotHttp),
        ("data:text/html,x", UrlError::NotHttp),
        ("http:example.com", UrlError::NotAbsolute),
        ("http:/example.com", UrlError::NotAbsolute),
        ("https://user:pass@example.com/", UrlError::Credentials),
        ("https://user@example.com", UrlError::Credentials),
        ("https://@example.com", UrlError::Credentials),
        ("https://example.com@evil.example/", UrlError::Credentials),
        ("http://example.com\\@evil.com", forbidden('\\', 18)),
        ("http://exa mple.com", forbidden(' ', 10)),
        ("http://example.com/<script>", forbidden('<', 19)),
        ("http://example.com/\"x", forbidden('"', 19)),
        ("https://exämple.com", UrlError::NotAscii { offset: 10 }),
        ("https://example。com", UrlError::NotAscii { offset: 15 }),
        (
            "http://example.com/%zz",
            UrlError::BadPercentEncoding { offset: 19 },
        ),
        (
            "http://example.com/%4",
            UrlError::BadPercentEncoding { offset: 19 },
        ),
        ("http://example.com/a[1]", forbidden('[', 20)),
        ("http://example.com/#a#b", forbidden('#', 21)),
        ("http://exam[ple.com/", forbidden('[', 11)),
        ("http://", UrlError::EmptyHost),
        ("http:///path", UrlError::EmptyHost),
        ("http://:80/", UrlError::EmptyHost),
        ("http://example.com:/", UrlError::BadPort),
        ("http://example.com:0/", UrlError::BadPort),
        ("http://example.com:65536/", UrlError::BadPort),
        ("http://example.com:80a/", UrlError::BadPort),
        ("http://example.com:000080/", UrlError::BadPort),
        ("http://example..com/", UrlError::BadHostName),
        ("http://.example.com/", UrlError::BadHostName),
        ("http://ex%41mple.com/", UrlError::BadHostName),
        ("http://a.b!c.com/", UrlError::BadHostName),
        ("http://example.com../", UrlError::BadHostName),
        ("http://localhost/", UrlError::LocalName),
        ("http://LOCALHOST:8080/", UrlError::LocalName),
        ("http://localhost./", UrlError::LocalName),
        ("http://app.localhost/", UrlError::LocalName),
        ("http://printer.local/", UrlError::LocalName),
        ("http://printer.LOCAL./", UrlError::LocalName),
        ("http://127.0.0.1/", blocked("127.0.0.1", Loopback)),
        (
            "http://127.255.255.254:8080/",
            blocked("127.255.255.254", Loopback),
        ),
        ("http://10.0.0.1/", blocked("10.0.0.1", Private)),
        ("http://172.16.0.1/", blocked("172.16.0.1", Private)),
        ("http://172.31.255.255/", blocked("172.31.255.255", Private)),
        ("http://192.168.1.1/", blocked("192.168.1.1", Private)),
        ("http://100.64.0.1/", blocked("100.64.0.1", Private)),
        (
            "http://169.254.169.254/latest/meta-data",
            blocked("169.254.169.254", LinkLocal),
        ),
        ("http://0.0.0.0/", blocked("0.0.0.0", Unspecified)),
        ("http://224.0.0.251/", blocked("224.0.0.251", Multicast)),
        (
            "http://239.255.255.250/",
            blocked("239.255.255.250", Multicast),
        ),
        (
            "http://255.255.255.255/",
            blocked("255.255.255.255", Reserved),
        ),
        ("http://[::1]/", blocked("::1", Loopback)),
        ("http://[::1]:8080/", blocked("::1", Loopback)),
        ("http://[::]/", blocked("::", Unspecified)),
        ("http://[fc00::1]/", blocked("fc00::1", Private)),
        ("http://[fd12:3456::1]/", blocked("fd12:3456::1", Private)),
        ("http://[fe80::1]/", blocked("fe80::1", LinkLocal)),
        ("http://[febf::1]/", blocked("febf::1", LinkLocal)),
        ("http://[ff02::1]/", blocked("ff02::1", Multicast)),
        (
            "http://[::ffff:127.0.0.1]/",
            blocked("::ffff:127.0.0.1", Loopback),
        ),
        (
            "http://[::ffff:7f00:1]/",
            blocked("::ffff:7f00:1", Loopback),
        ),
        (
            "http://[0:0:0:0:0:ffff:a00:1]/",
            blocked("::ffff:10.0.0.1", Private),
        ),
        (
            "http://[::ffff:169.254.169.254]/",
            blocked("::ffff:169.254.169.254", LinkLocal),
        ),
        ("http://[::127.0.0.1]/", blocked("::127.0.0.1", Loopback)),
        (
            "http://[64:ff9b::10.0.0.1]/",
            blocked("64:ff9b::a00:1", Private),
        ),
        ("http://[fe80::1%25eth0]/", UrlError::BadIpv6),
        ("http://[::1/", UrlError::BadIpv6),
        ("http://[v1.abc]/", UrlError::BadIpv6),
        ("http://[127.0.0.1]/", UrlError::BadIpv6),
        ("http://[::1]x/", forbidden('x', 12)),
        ("http://2130706433/", UrlError::NonCanonicalIpv4),
        ("http://0x7f.1/", UrlError::NonCanonicalIpv4),
        ("http://0x7f000001/", UrlError::NonCanonicalIpv4),
        ("http://0177.0.0.1/", UrlError::NonCanonicalIpv4),
        ("http://127.1/", UrlError::NonCanonicalIpv4),
        ("http://127.0.0.1./", UrlError::NonCanonicalIpv4),
        ("http://127.000.0.1/", UrlError::NonCanonicalIpv4),
        ("http://1.2.3.4.5/", UrlError::NonCanonicalIpv4),
        ("http://8.8.8.010/", UrlError::NonCanonicalIpv4),
        ("http://0x08.8.8.8/", UrlError::NonCanonicalIpv4),
        ("http://foo.123/", UrlError::NonCanonicalIpv4),
        ("http://example.0x/", UrlError::NonCanonicalIpv4),
        ("http://0/", UrlError::NonCanonicalIpv4),
    ];
    for (url, error) in refused {
        assert_eq!(check_url(url), Err(error), "{url}");
    }
    let long_label = format!("http://{}.com/", "a".repeat(64));
    assert_eq!(check_url(&long_label), Err(UrlError::BadHostName));
    let ok_label = format!("http://{}.com/", "a".repeat(63));
    assert_eq!(check_url(&ok_label), Ok(()));
}
