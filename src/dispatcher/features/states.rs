//! Each runtime-served feature's state for one generation, which the generation's
//! connection holds and only the features read.

use std::collections::HashMap;

use super::composition::parent::CompositionParent;

/// Each feature's state for one generation.
pub(in crate::dispatcher) struct FeatureStates {
    /// The generation's resource records (section 2.26).
    pub resources: crate::features::resources::ResourceTable,
    /// Compositions in progress, by the `tool/call` that admitted them (section 2.25).
    pub compositions: HashMap<u64, CompositionParent>,
}

impl FeatureStates {
    /// The state of a new generation; `owner` names its resource records.
    pub fn new(owner: String) -> FeatureStates {
        FeatureStates {
            resources: crate::features::resources::ResourceTable::new(owner),
            compositions: HashMap::new(),
        }
    }
}
