//! Launching one generation: resolve the entrypoint, make its scratch directory, spawn
//! it in its own process group with the sanitized environment, start its I/O threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::Shared;
use crate::limits::OCTET_VERSION;
use crate::manifest::{self, LocatedManifest};
use crate::model::events::{Diagnostic, GenerationRef};
use crate::model::start::StartError;
use crate::negotiation::{ContractMethod, Feature, InitializeOffer};
use crate::services::bound::ServiceBindings;
use crate::transport::{
    self, ChildProcess, ConnId, GenerationIo, IoConfig, ScratchDir, SpawnSpec, StderrEvent,
};
use crate::wire::codec::Codec;

/// A spawned generation, not yet registered with the dispatcher.
pub(crate) struct Launched {
    pub conn: ConnId,
    pub generation: u64,
    pub located: LocatedManifest,
    pub offer: InitializeOffer,
    pub child: ChildProcess,
    pub io: GenerationIo,
    pub scratch: ScratchDir,
    pub frame_limit: Arc<AtomicUsize>,
    /// The services bound for this generation; its offer follows them.
    pub services: ServiceBindings,
}

/// Checks the manifest and spawns a new generation of it. Nothing runs when
/// `requires_octet` excludes this host.
pub(crate) fn launch(shared: &Shared, located: LocatedManifest) -> Result<Launched, StartError> {
    let manifest = &located.manifest;
    manifest::check_requires_octet(manifest, OCTET_VERSION).map_err(StartError::Manifest)?;
    let workspace = shared.workspace.clone();
    let mut offer = InitializeOffer::default_for(manifest.api_version, manifest);
    let per_extension = shared.extension_services.lock();
    let own = per_extension.get(&manifest.name);
    let services = match own {
        Some(own) => own.over(&shared.services),
        None => shared.services.clone(),
    };
    let (services, withheld) =
        super::features::offering::bind_runtime_services(shared, manifest, services, own);
    drop(per_extension);
    // Conditional services are offered only when bound (section 1.1).
    if manifest.api_version.is_feature_negotiated() {
        if services.approver_service().is_some() {
            offer = offer.with_feature(Feature::Approvals);
        }
        if services.secret_broker().is_some() && !manifest.capabilities.secrets.is_empty() {
            offer = offer.with_feature(Feature::Secrets);
        }
    }
    // Wave-1 features ride API 0.2 and 0.4 only (section 1.11: API 0.3 negotiates
    // none); the API 0.3 services are contract capabilities, offered with their methods.
    // A feature rides only the API versions that carry it, and only with the features it
    // requires bound too (compaction without control, an autocomplete edit without
    // autocomplete): such a binding is not offered, and the start goes on without it.
    let bound: Vec<Feature> = services
        .features()
        .filter(|feature| feature.available_on(manifest.api_version))
        .filter(|feature| !withheld.contains(feature))
        .collect();
    for &feature in &bound {
        if feature.requires().iter().all(|r| bound.contains(r)) {
            offer = offer.with_feature(feature);
        }
    }
    offer = super::features::offering::offer_runtime_features(shared, manifest, offer);
    for capability in services.kinds().filter_map(|kind| kind.capability()) {
        if manifest.api_version == manifest::ApiVersion::V0_3 {
            offer = offer.with_contract_capability(capability);
            for method in ContractMethod::ALL
                .into_iter()
                .filter(|m| m.capability() == capability)
            {
                offer = offer.with_contract_method(method);
            }
        }
    }
    let path_var = transport::process_environment("PATH");
    let program = transport::resolve_command(
        &manifest.entrypoint.command,
        &located.dir,
        path_var.as_deref(),
    )
    .map_err(StartError::Spawn)?;
    let scratch = ScratchDir::new_in(shared.scratch_root.path()).map_err(StartError::Io)?;
    let mut env = transport::child_environment(
        &located,
        &workspace,
        scratch.path(),
        &transport::process_environment,
    );
    // The embedder's entries for this extension win over the manifest's.
    for (extension, name, value) in &shared.launch.env {
        if *extension == manifest.name {
            env.retain(|(key, _)| key != name.as_str());
            env.push((name.into(), value.into()));
        }
    }
    // The fence marker goes last, over any manifest entry of the reserved name.
    #[cfg(target_os = "linux")]
    let fence = transport::fence::GenerationFence::new().map_err(StartError::Io)?;
    #[cfg(target_os = "linux")]
    {
        let (name, value) = fence.env_entry();
        env.retain(|(key, _)| *key != name);
        env.push((name, value));
    }
    let spec = match shared.launch.wrapper.split_first() {
        None => SpawnSpec {
            program,
            args: manifest.entrypoint.args.clone(),
            env,
            cwd: workspace,
        },
        // `wrapper... entrypoint args...`: the wrapper is found in PATH.
        Some((wrapper, prefix)) => {
            let wrapper = transport::resolve_command(wrapper, &workspace, path_var.as_deref())
                .map_err(StartError::Spawn)?;
            let mut args = prefix.to_vec();
            args.push(program.to_string_lossy().into_owned());
            args.extend(manifest.entrypoint.args.iter().cloned());
            SpawnSpec {
                program: wrapper,
                args,
                env,
                cwd: workspace,
            }
        }
    };
    // The guardian learns the marker before the child exists and its group right after,
    // so nothing the child starts escapes it should the host die.
    #[cfg(target_os = "linux")]
    let mut lease = shared
        .guardian
        .as_ref()
        .map(|guardian| guardian.watch_fence(fence.marker()));
    #[cfg(not(target_os = "linux"))]
    let mut lease = shared.guardian.as_ref().map(|guardian| guardian.lease());
    let mut spawned = transport::spawn(&spec).map_err(StartError::Spawn)?;
    if let Some(lease) = &mut lease {
        lease.watch_group(spawned.pid);
    }

    let conn = ConnId(shared.next_conn.fetch_add(1, Ordering::Relaxed));
    let generation = {
        let mut generations = shared.generations.lock();
        let g = generations.entry(manifest.name.clone()).or_insert(0);
        *g += 1;
        *g
    };
    let events = shared.events.clone();
    let source = GenerationRef {
        extension: manifest.name.clone(),
        generation,
    };
    let embedder_sink = shared.launch.stderr.clone();
    let stderr_sink = Box::new(move |event: StderrEvent| {
        let diagnostic = match event {
            StderrEvent::Line { text, .. } => {
                if let Some(sink) = &embedder_sink {
                    sink(&source, &text);
                }
                Diagnostic::Stderr { line: text }
            }
            StderrEvent::Suppressed { count } => Diagnostic::StderrSuppressed { lines: count },
        };
        events.diagnostic(&source, diagnostic);
    });
    // API 0.3 speaks canonical JSON (its frame limit excludes the LF); the others
    // speak JSON-RPC lines.
    let codec = Codec::for_api(manifest.api_version);
    let config = IoConfig {
        spin_before_sleep: shared.spin_before_sleep,
        ..IoConfig::for_codec(codec)
    };
    let frame_limit = config.frame_limit.clone();
    // A child that cannot get its I/O threads is dropped here, which kills its group.
    let io = transport::start_io_with_codec(
        conn,
        &mut spawned,
        config,
        codec,
        shared.transport.clone(),
        stderr_sink,
    )
    .map_err(StartError::Io)?;
    let mut child = spawned.into_process();
    #[cfg(target_os = "linux")]
    {
        child = child.with_fence(fence);
    }
    if let Some(lease) = lease {
        child = child.with_guardian(lease);
    }
    Ok(Launched {
        conn,
        generation,
        located,
        offer,
        child,
        io,
        scratch,
        frame_limit,
        services,
    })
}
