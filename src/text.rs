//! Cutting text to a byte bound without splitting a character.

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character
/// boundary (all of `text` when it fits).
pub(crate) fn head(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_never_splits_a_character() {
        assert_eq!(head("short", 64), "short");
        assert_eq!(head("héllo", 2), "h");
        assert_eq!(head("héllo", 3), "hé");
        assert_eq!(head("界界", 5), "界");
        assert_eq!(head("abc", 0), "");
    }
}
