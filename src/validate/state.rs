//! The generic state vocabulary shared by menus (section 1.6b) and presentation snapshots
//! (section 2.5).

use super::field::Keyword;

/// One of the generic states of section 2.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenericState {
    /// Nothing there.
    Empty,
    /// Being loaded.
    Loading,
    /// Waiting to start or to be set up.
    Pending,
    /// In effect.
    Active,
    /// Working.
    Running,
    /// Finished successfully.
    Succeeded,
    /// Finished with a failure.
    Failed,
    /// Cancelled.
    Cancelled,
    /// Working with reduced function.
    Degraded,
    /// Stopped.
    Stopped,
    /// Not available.
    Unavailable,
}

impl GenericState {
    /// The wire name, such as `"pending"`.
    pub fn as_str(self) -> &'static str {
        match self {
            GenericState::Empty => "empty",
            GenericState::Loading => "loading",
            GenericState::Pending => "pending",
            GenericState::Active => "active",
            GenericState::Running => "running",
            GenericState::Succeeded => "succeeded",
            GenericState::Failed => "failed",
            GenericState::Cancelled => "cancelled",
            GenericState::Degraded => "degraded",
            GenericState::Stopped => "stopped",
            GenericState::Unavailable => "unavailable",
        }
    }

    /// Parses a wire name exactly.
    pub fn parse(text: &str) -> Option<GenericState> {
        GenericState::ALL
            .iter()
            .copied()
            .find(|state| state.as_str() == text)
    }
}

impl Keyword for GenericState {
    const ALL: &'static [GenericState] = &[
        GenericState::Empty,
        GenericState::Loading,
        GenericState::Pending,
        GenericState::Active,
        GenericState::Running,
        GenericState::Succeeded,
        GenericState::Failed,
        GenericState::Cancelled,
        GenericState::Degraded,
        GenericState::Stopped,
        GenericState::Unavailable,
    ];
    const NAMES: &'static [&'static str] = &[
        "empty",
        "loading",
        "pending",
        "active",
        "running",
        "succeeded",
        "failed",
        "cancelled",
        "degraded",
        "stopped",
        "unavailable",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_agree() {
        assert_eq!(GenericState::ALL.len(), GenericState::NAMES.len());
        for (state, name) in GenericState::ALL.iter().zip(GenericState::NAMES) {
            assert_eq!(state.as_str(), *name);
            assert_eq!(GenericState::parse(name), Some(*state));
        }
        assert_eq!(GenericState::parse("done"), None);
    }
}
