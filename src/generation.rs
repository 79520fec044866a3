//! Which process generation of which extension: the name every event, status and
//! service call carries (section 5: a restart or reload starts a new generation).

/// Identifies one process generation of one extension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GenerationRef {
    /// The extension's manifest name.
    pub extension: String,
    /// Its process generation, counted from 1 for each extension.
    pub generation: u64,
}

impl std::fmt::Display for GenerationRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.extension, self.generation)
    }
}
