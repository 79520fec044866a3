//! Who the runtime offers the features it serves itself to: tool composition (section
//! 2.25), resource refs and operation descriptors (2.26), bulk objects (2.27). What
//! they act on is the host's own (its extensions' tools, their native resources, files
//! in a host-owned directory), so no embedder service is bound for them; the embedder
//! turns each on for every API 0.4 extension or for some of them.

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::negotiation::{Feature, FeatureSet};

/// The embedder's choice of runtime-served features, per extension.
#[derive(Debug, Default)]
pub struct RuntimeOffers {
    all: FeatureSet,
    extensions: Mutex<HashMap<String, FeatureSet>>,
}

impl RuntimeOffers {
    /// The features the runtime serves itself, which an embedder may turn on.
    pub const FEATURES: [Feature; 4] = [
        Feature::ToolCompositionV1,
        Feature::ResourceRefsV1,
        Feature::OperationDescriptorsV1,
        Feature::BulkObjectsV1,
    ];

    /// Offers of `all` to every API 0.4 extension (features outside
    /// [`RuntimeOffers::FEATURES`] are ignored).
    pub fn new(all: FeatureSet) -> RuntimeOffers {
        RuntimeOffers {
            all: restrict(all),
            extensions: Mutex::new(HashMap::new()),
        }
    }

    /// Offers `feature` to the extension `name` from its next start on; false when
    /// the runtime does not serve `feature` itself. `resource_refs_v1` brings
    /// `operation_descriptors_v1` with it: a resource is exported only through a
    /// descriptor.
    pub fn allow(&self, name: &str, feature: Feature) -> bool {
        if !Self::FEATURES.contains(&feature) {
            return false;
        }
        let mut extensions = self.extensions.lock();
        let set = extensions.entry(name.to_string()).or_default();
        set.insert(feature);
        if feature == Feature::ResourceRefsV1 {
            set.insert(Feature::OperationDescriptorsV1);
        }
        true
    }

    /// The runtime-served features offered to the extension `name`.
    pub fn offered_to(&self, name: &str) -> FeatureSet {
        let mut offered = self.all;
        if let Some(own) = self.extensions.lock().get(name) {
            for feature in Self::FEATURES {
                if own.contains(feature) {
                    offered.insert(feature);
                }
            }
        }
        offered
    }
}

/// `set` without the features the runtime does not serve, and with
/// `operation_descriptors_v1` wherever `resource_refs_v1` is.
fn restrict(set: FeatureSet) -> FeatureSet {
    let mut restricted = FeatureSet::new();
    for feature in RuntimeOffers::FEATURES {
        if set.contains(feature) {
            restricted.insert(feature);
        }
    }
    if restricted.contains(Feature::ResourceRefsV1) {
        restricted.insert(Feature::OperationDescriptorsV1);
    }
    restricted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_are_per_extension_and_resource_refs_bring_descriptors() {
        let mut all = FeatureSet::new();
        all.insert(Feature::ToolCompositionV1);
        all.insert(Feature::Composer);
        let offers = RuntimeOffers::new(all);
        assert!(offers.offered_to("a").contains(Feature::ToolCompositionV1));
        assert!(!offers.offered_to("a").contains(Feature::Composer));
        assert!(offers.allow("b", Feature::ResourceRefsV1));
        assert!(!offers.allow("b", Feature::Composer));
        let b = offers.offered_to("b");
        assert!(b.contains(Feature::ResourceRefsV1) && b.contains(Feature::OperationDescriptorsV1));
        assert!(!offers.offered_to("a").contains(Feature::ResourceRefsV1));
    }
}
