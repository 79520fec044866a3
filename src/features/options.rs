//! The options of the features the runtime serves itself, as one table: the CLI's
//! global flags (and their help), serve's options and the builder all read
//! [`RuntimeOptions`], so a new option is one field here and one line in
//! [`ExtensionHostBuilder::runtime_options`]; the Python and Node clients' options are
//! held to [`RuntimeOptions::FLAGS`] by a test.
//!
//! [`ExtensionHostBuilder::runtime_options`]: crate::ExtensionHostBuilder::runtime_options

use std::path::PathBuf;
use std::time::Duration;

/// Which runtime-served features a host offers every extension, and where they keep
/// their files. Each is off by default; under serve, a `start` may also offer a feature
/// to one extension.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[non_exhaustive]
pub struct RuntimeOptions {
    /// Offer tool composition (`tool_composition_v1`, API 0.4) to every extension: its
    /// tool may read every running extension's tools and call them through the host
    /// (under serve, a `start` with `"features":["tool_composition_v1"]` offers it to
    /// one extension; docs/serve-protocol.md, "Tool composition")
    #[cfg_attr(feature = "cli", arg(long = "tool-composition", global = true))]
    pub tool_composition: bool,
    /// Where composing tools keep their stores [default: WORKSPACE/.octet/composition]
    #[cfg_attr(
        feature = "cli",
        arg(long = "composition-store", global = true, value_name = "DIR")
    )]
    pub composition_store: Option<PathBuf>,
    /// The one deadline of a composing tool's nested calls, in seconds (decimals
    /// allowed; 0.1 to 600) [default: 30]
    #[cfg_attr(
        feature = "cli",
        arg(long = "composition-timeout", global = true, value_name = "SECONDS", value_parser = parse_composition_timeout)
    )]
    pub composition_timeout: Option<Duration>,
    /// Offer native resource refs and operation descriptors (`resource_refs_v1`,
    /// `operation_descriptors_v1`, API 0.4) to every extension: a tool may return an
    /// extension-local value that a later call takes as input (under serve, a `start`
    /// with `"features":["resource_refs_v1"]` offers them to one extension;
    /// docs/serve-protocol.md, "Resource refs")
    #[cfg_attr(feature = "cli", arg(long = "resource-refs", global = true))]
    pub resource_refs: bool,
    /// Make `get_applicable_operations` a host tool: serve's `get_applicable_operations`
    /// op lists the tools that take a resource value (section 2.26)
    #[cfg_attr(feature = "cli", arg(long = "operation-discovery", global = true))]
    pub operation_discovery: bool,
    /// Configure bulk storage in DIR, which offers immutable bulk objects
    /// (`bulk_objects_v1`, API 0.4) to every extension: large bytes pass as files in
    /// DIR/transfer, snapshot and verified by the host (docs/serve-protocol.md, "Bulk
    /// objects")
    #[cfg_attr(
        feature = "cli",
        arg(long = "bulk-storage", global = true, value_name = "DIR")
    )]
    pub bulk_storage: Option<PathBuf>,
}

impl RuntimeOptions {
    /// Every option: its field (the CLI's clap id and the Python keyword) and its
    /// command-line flag.
    pub const FLAGS: [(&'static str, &'static str); 6] = [
        ("tool_composition", "--tool-composition"),
        ("composition_store", "--composition-store"),
        ("composition_timeout", "--composition-timeout"),
        ("resource_refs", "--resource-refs"),
        ("operation_discovery", "--operation-discovery"),
        ("bulk_storage", "--bulk-storage"),
    ];
}

/// Parses `--composition-timeout`: seconds, decimals allowed, within
/// [`crate::limits::MIN_COMPOSITION_TIMEOUT`] and
/// [`crate::limits::MAX_COMPOSITION_TIMEOUT`].
pub fn parse_composition_timeout(text: &str) -> Result<Duration, String> {
    use crate::limits::{MAX_COMPOSITION_TIMEOUT, MIN_COMPOSITION_TIMEOUT};
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    let timeout = Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(MIN_COMPOSITION_TIMEOUT..=MAX_COMPOSITION_TIMEOUT).contains(&timeout) {
        return Err(format!(
            "the composition timeout must be {} to {} seconds, not {text}",
            MIN_COMPOSITION_TIMEOUT.as_secs_f64(),
            MAX_COMPOSITION_TIMEOUT.as_secs()
        ));
    }
    Ok(timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_composition_timeout_is_seconds_within_its_bounds() {
        assert_eq!(
            parse_composition_timeout("2.5"),
            Ok(Duration::from_millis(2500))
        );
        assert_eq!(
            parse_composition_timeout("600"),
            Ok(Duration::from_secs(600))
        );
        for bad in ["0.05", "601", "-1", "NaN", "soon", ""] {
            let error = parse_composition_timeout(bad).unwrap_err();
            assert!(error.contains(bad) || bad.is_empty(), "{error}");
        }
    }
}
