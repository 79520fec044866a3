//! Lowercase hexadecimal, and random bytes from the operating system's CSPRNG
//! (`/dev/urandom`): the digests, tokens, markers and file names the host makes.

use std::fs::File;
use std::io::{self, Read};

/// `bytes` as lowercase hexadecimal.
pub(crate) fn lower(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0F)]));
    }
    text
}

/// True for a SHA-256 as this host writes it: exactly 64 lowercase hex digits.
pub(crate) fn is_sha256(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `N` random bytes.
pub(crate) fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// `bytes` random bytes as lowercase hexadecimal.
pub(crate) fn random(bytes: usize) -> io::Result<String> {
    let mut random = vec![0u8; bytes];
    File::open("/dev/urandom")?.read_exact(&mut random)?;
    Ok(lower(&random))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_and_random_is_fresh() {
        assert_eq!(lower(&[0x00, 0xab, 0x7f]), "00ab7f");
        let (a, b) = (random(16).unwrap(), random(16).unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
    }
}
