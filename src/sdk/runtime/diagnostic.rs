//! The SDK's own diagnostics: one line each on stderr, which the host drains.

/// Writes one diagnostic line to stderr, which the host drains (section "Every request
/// and response").
pub(crate) fn diagnostic(message: std::fmt::Arguments<'_>) {
    eprintln!("octet sdk: {message}");
}
