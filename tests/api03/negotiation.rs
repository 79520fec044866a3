//! The API 0.3 `initialize`: the params and contract offer exactly, and every rule of
//! the response's contract selection.

use octet_host::manifest::ApiVersion;
use octet_host::negotiation::{
    initialize_params, validate_initialize_result, Capability, ContractError, ContractLimits,
    ContractMethod, Feature, HostContext, InitializeOffer, NegotiationError,
};
use octet_host::wire::canonical::CanonicalError;
use octet_host::wire::codec::Codec;
use octet_host::wire::{codes, RequestId};
use serde_json::{json, Value};

use crate::support::{default_offer, echo_only, example_host, hello_world, workspace};

fn offer() -> InitializeOffer {
    default_offer(&hello_world())
}

#[test]
fn the_request_carries_the_contract_offer_exactly() {
    let located = hello_world();
    let params = initialize_params(&located, workspace(), &example_host(), &offer()).unwrap();
    assert_eq!(params.api_version(), "0.3");
    assert_eq!(params.protocol_version(), None);
    assert_eq!(
        params.to_value(),
        json!({
            "api_version": "0.3",
            "octet_version": "0.8.0",
            "extension": {
                "name": "hello-world",
                "version": "0.1.0",
                "manifest_path": "/home/user/.octet/extensions/hello-world/extension.toml",
                "source": "global"
            },
            "workspace": "/home/user/project",
            "capabilities": {"filesystem": "none", "process": false, "network": false},
            "contributes": {
                "tools": ["hello_world"],
                "commands": ["hello"],
                "hooks": ["before_prompt", "after_response"],
                "ui": ["status"],
                "context": true,
                "tool_renderers": ["hello_world"],
                "notifications": true,
                "confirmations": false,
                "presentation": false
            },
            "host": {
                "session_id": null,
                "session_name": null,
                "model": "claude-sonnet-4-6",
                "reasoning": null,
                "active_skills": []
            },
            "flag_values": [],
            "contract": {
                "schema": "octet.extension.api/0.3",
                "encoding": "octet-canonical-json-v1",
                "required_capabilities": ["content_parts", "core", "request_cancellation", "tool_call"],
                "optional_capabilities": ["lifecycle_events", "migration.adapter.v1", "provider_stream"],
                "required_methods": ["$/cancelRequest", "initialize", "shutdown", "tool/call"],
                "optional_methods": ["hook/run", "migration/detect", "migration/import",
                    "provider/cancel", "provider/event", "provider/stream"],
                "limits": {"max_frame_bytes": 1048576, "max_concurrent_requests": 64, "max_tools": 256}
            }
        })
    );
}

/// The whole `initialize` frame, byte for byte: upstream's 0.3 extensions check the
/// offer strictly (SUPPLEMENT "initialize"), so nothing outside the 0.3 vocabulary may
/// appear: no `menu` in `contributes`, no `request_progress`, `$/progress` or
/// `input/request` in the contract; the optional capabilities are the host-driven ones
/// the host serves, each with its methods.
#[test]
fn the_request_frame_is_golden() {
    let mut located = hello_world();
    located.manifest.contributes.menu = true;
    located.manifest.contributes.confirmations = true;
    let offer = default_offer(&located);
    let params = initialize_params(&located, workspace(), &example_host(), &offer).unwrap();
    let frame = Codec::Canonical
        .encode_request(
            &RequestId::Number(1),
            "initialize",
            &params.to_value(),
            1 << 20,
        )
        .unwrap();
    let golden = concat!(
        r#"{"id":1,"jsonrpc":"2.0","method":"initialize","params":{"api_version":"0.3","#,
        r#""capabilities":{"filesystem":"none","network":false,"process":false},"#,
        r#""contract":{"encoding":"octet-canonical-json-v1","limits":{"max_concurrent_requests":64,"#,
        r#""max_frame_bytes":1048576,"max_tools":256},"#,
        r#""optional_capabilities":["lifecycle_events","migration.adapter.v1","provider_stream"],"#,
        r#""optional_methods":["hook/run","migration/detect","migration/import","provider/cancel","#,
        r#""provider/event","provider/stream"],"#,
        r#""required_capabilities":["content_parts","core","request_cancellation","tool_call"],"#,
        r#""required_methods":["$/cancelRequest","initialize","shutdown","tool/call"],"#,
        r#""schema":"octet.extension.api/0.3"},"#,
        r#""contributes":{"commands":["hello"],"confirmations":true,"context":true,"#,
        r#""hooks":["before_prompt","after_response"],"notifications":true,"presentation":false,"#,
        r#""tool_renderers":["hello_world"],"tools":["hello_world"],"ui":["status"]},"#,
        r#""extension":{"manifest_path":"/home/user/.octet/extensions/hello-world/extension.toml","#,
        r#""name":"hello-world","source":"global","version":"0.1.0"},"flag_values":[],"#,
        r#""host":{"active_skills":[],"model":"claude-sonnet-4-6","reasoning":null,"session_id":null,"#,
        r#""session_name":null},"octet_version":"0.8.0","workspace":"/home/user/project"}}"#,
        "\n"
    );
    assert_eq!(String::from_utf8(frame).unwrap(), golden);
}

#[test]
fn the_offer_holds_only_the_0_3_vocabulary() {
    let located = echo_only();
    let offer = default_offer(&located);
    assert_eq!(
        offer.optional_capabilities().collect::<Vec<_>>(),
        [
            Capability::LifecycleEvents,
            Capability::MigrationAdapterV1,
            Capability::ProviderStream
        ]
    );
    // Each method offered comes with its capability.
    let methods: Vec<ContractMethod> = offer.optional_methods().collect();
    assert_eq!(methods.len(), 6);
    assert!(methods
        .iter()
        .all(|m| offer.optional_capabilities().any(|c| c == m.capability())));
    assert_eq!(offer.contract_limits(), ContractLimits::default());
    // The features the required capabilities grant count as offered; progress is no
    // 0.3 name at all.
    assert!(offer.offers(Feature::ContentParts));
    assert!(!offer.offers(Feature::RequestProgress));
    assert!(!offer.offers(Feature::Artifacts));
    // Builders add to the offer; required entries never enter the optional lists.
    let more = InitializeOffer::default()
        .with_contract_capability(Capability::LifecycleEvents)
        .with_contract_method(ContractMethod::HookRun)
        .with_contract_method(ContractMethod::ToolCall)
        .with_contract_capability(Capability::Core)
        .with_max_frame_bytes(4096)
        .with_max_tools(8)
        .with_max_concurrent_requests(2);
    assert_eq!(
        more.optional_methods().collect::<Vec<_>>(),
        [ContractMethod::HookRun]
    );
    assert_eq!(
        more.optional_capabilities().collect::<Vec<_>>(),
        [Capability::LifecycleEvents]
    );
    assert_eq!(
        more.contract_limits(),
        ContractLimits {
            max_frame_bytes: 4096,
            max_concurrent_requests: 2,
            max_tools: 8
        }
    );
    let params = initialize_params(&located, workspace(), &example_host(), &more).unwrap();
    assert_eq!(
        params.to_value()["contract"]["limits"],
        json!({"max_frame_bytes": 4096, "max_concurrent_requests": 2, "max_tools": 8})
    );
}

#[test]
fn the_offer_is_checked() {
    let located = hello_world();
    let build = |offer: &InitializeOffer| {
        initialize_params(&located, workspace(), &example_host(), offer).unwrap_err()
    };
    assert_eq!(
        build(&offer().with_max_frame_bytes(0)),
        NegotiationError::Contract(ContractError::OfferInvalidLimit {
            name: "max_frame_bytes",
            value: 0
        })
    );
    assert_eq!(
        build(&offer().with_max_frame_bytes(1_048_577)),
        NegotiationError::Contract(ContractError::OfferInvalidLimit {
            name: "max_frame_bytes",
            value: 1_048_577
        })
    );
    assert_eq!(
        build(&offer().with_max_tools(257)),
        NegotiationError::Contract(ContractError::OfferInvalidLimit {
            name: "max_tools",
            value: 257
        })
    );
    assert_eq!(
        build(&offer().with_max_concurrent_requests(65)),
        NegotiationError::OfferInvalidConcurrency { value: 65 }
    );
    // A method is offered only together with the capability that gates it.
    for method in [
        ContractMethod::HookRun,
        ContractMethod::ProviderStream,
        ContractMethod::SessionCreate,
    ] {
        assert_eq!(
            build(&InitializeOffer::default().with_contract_method(method)),
            NegotiationError::Contract(ContractError::OfferMethodWithoutCapability {
                method,
                capability: method.capability(),
            })
        );
    }
    // Contract entries cannot be offered on the feature-negotiated wire.
    let mut v0_2 = hello_world();
    v0_2.manifest.api_version = ApiVersion::V0_2;
    let offer = InitializeOffer::default_for(ApiVersion::V0_2, &v0_2.manifest)
        .with_contract_method(ContractMethod::HookRun);
    assert_eq!(
        initialize_params(&v0_2, workspace(), &example_host(), &offer).unwrap_err(),
        NegotiationError::Contract(ContractError::OfferedOnApi {
            api: ApiVersion::V0_2
        })
    );
}

#[test]
fn params_without_a_canonical_encoding_are_refused() {
    let host = HostContext {
        reasoning: Some(json!({"budget": 0.5})),
        ..example_host()
    };
    let error = initialize_params(&hello_world(), workspace(), &host, &offer()).unwrap_err();
    assert!(
        matches!(
            error,
            NegotiationError::NotCanonical(CanonicalError::Float { .. })
        ),
        "{error:?}"
    );
    assert_eq!(error.code(), "not_canonical");
}

// ---------------------------------------------------------------------------
// The response.
// ---------------------------------------------------------------------------

fn hello_tool() -> Value {
    json!({
        "name": "hello_world",
        "description": "Greet someone",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}}
    })
}

/// The smallest valid selection: the required entries at the offered limits.
fn response() -> Value {
    json!({
        "api_version": "0.3",
        "tools": [hello_tool()],
        "contract": {
            "schema": "octet.extension.api/0.3",
            "encoding": "octet-canonical-json-v1",
            "capabilities": ["content_parts", "core", "request_cancellation", "tool_call"],
            "methods": ["$/cancelRequest", "initialize", "shutdown", "tool/call"],
            "limits": {"max_frame_bytes": 1048576, "max_concurrent_requests": 64, "max_tools": 256}
        }
    })
}

fn reject(result: &Value) -> NegotiationError {
    validate_initialize_result(&hello_world(), &offer(), result).unwrap_err()
}

fn contract_error(result: &Value) -> ContractError {
    match reject(result) {
        NegotiationError::Contract(error) => error,
        other => panic!("not a contract error: {other:?}"),
    }
}

#[test]
fn a_minimal_selection_is_accepted() {
    let negotiated = validate_initialize_result(&hello_world(), &offer(), &response()).unwrap();
    assert_eq!(negotiated.api_version, ApiVersion::V0_3);
    assert_eq!(negotiated.tools.len(), 1);
    assert!(negotiated.commands.is_empty());
    assert!(negotiated.lifecycle_subscriptions.is_empty());
    assert_eq!(
        negotiated.features.iter().collect::<Vec<_>>(),
        [Feature::RequestCancellation, Feature::ContentParts]
    );
    assert_eq!(negotiated.max_concurrent_requests, 64);
    let contract = negotiated.contract.expect("API 0.3 has a contract");
    assert_eq!(
        contract.capabilities.iter().copied().collect::<Vec<_>>(),
        Capability::REQUIRED
    );
    assert_eq!(
        contract.methods.iter().copied().collect::<Vec<_>>(),
        ContractMethod::REQUIRED
    );
    assert_eq!(contract.limits, ContractLimits::default());
    assert_eq!(contract.transport_frame_limit(), 1_048_577);
    assert!(contract.allows("shutdown"));
    assert!(!contract.allows("hook/run"));
}

#[test]
fn optional_entries_and_lower_limits_are_selected() {
    let richer = offer()
        .with_contract_capability(Capability::LifecycleEvents)
        .with_contract_method(ContractMethod::HookRun);
    let mut result = response();
    result["contract"]["capabilities"] = json!([
        "tool_call",
        "lifecycle_events",
        "core",
        "request_cancellation",
        "content_parts"
    ]);
    result["contract"]["methods"] = json!([
        "tool/call",
        "shutdown",
        "initialize",
        "$/cancelRequest",
        "hook/run"
    ]);
    result["contract"]["limits"] =
        json!({"max_frame_bytes": 4096, "max_concurrent_requests": 4, "max_tools": 1});
    result["tools"][0]["output_schema"] = json!({"type": "object"});
    let negotiated = validate_initialize_result(&hello_world(), &richer, &result).unwrap();
    assert_eq!(negotiated.max_concurrent_requests, 4);
    assert!(negotiated.tools[0].output_schema.is_some());
    let contract = negotiated.contract.unwrap();
    assert!(contract.has_capability(Capability::LifecycleEvents));
    assert!(contract.allows("hook/run"));
    assert!(!contract.allows("$/progress"));
    assert_eq!(contract.transport_frame_limit(), 4097);
    assert_eq!(
        contract.limits,
        ContractLimits {
            max_frame_bytes: 4096,
            max_concurrent_requests: 4,
            max_tools: 1
        }
    );
    // A method selected without the capability that gates it is refused.
    let mut result = response();
    result["contract"]["methods"]
        .as_array_mut()
        .unwrap()
        .push(json!("hook/run"));
    let error = match validate_initialize_result(&hello_world(), &richer, &result).unwrap_err() {
        NegotiationError::Contract(error) => error,
        other => panic!("not a contract error: {other:?}"),
    };
    assert_eq!(
        error,
        ContractError::MethodWithoutCapability {
            method: ContractMethod::HookRun,
            capability: Capability::LifecycleEvents
        }
    );
    assert_eq!(error.wire_code(), codes::CAPABILITY_MISMATCH);
}

#[test]
fn required_capabilities_and_methods_must_all_be_selected() {
    for (i, capability) in Capability::REQUIRED.into_iter().enumerate() {
        let mut result = response();
        result["contract"]["capabilities"]
            .as_array_mut()
            .unwrap()
            .remove(i);
        let error = contract_error(&result);
        assert_eq!(
            error,
            ContractError::MissingRequiredCapability { capability }
        );
        assert_eq!(error.wire_code(), codes::CAPABILITY_MISMATCH);
    }
    for (i, method) in ContractMethod::REQUIRED.into_iter().enumerate() {
        let mut result = response();
        result["contract"]["methods"]
            .as_array_mut()
            .unwrap()
            .remove(i);
        assert_eq!(
            contract_error(&result),
            ContractError::MissingRequiredMethod { method }
        );
    }
}

#[test]
fn only_offered_entries_may_be_selected() {
    for name in [
        "dynamic_tools",
        "session_lifecycle",
        "request_progress",
        "artifacts",
        "Core",
    ] {
        let mut result = response();
        result["contract"]["capabilities"]
            .as_array_mut()
            .unwrap()
            .push(json!(name));
        assert_eq!(
            contract_error(&result),
            ContractError::CapabilityNotOffered { name: name.into() }
        );
    }
    // Not part of 0.3 at all, or not offered by this host.
    for name in [
        "$/progress",
        "input/request",
        "session/create",
        "providers/register",
        "context/collect",
        "tools/register",
        "tools/unregister",
        "command/execute",
        "menu/collect",
        "context/contribution",
        "confirmation/request",
        "no/such",
    ] {
        let mut result = response();
        result["contract"]["methods"]
            .as_array_mut()
            .unwrap()
            .push(json!(name));
        let error = contract_error(&result);
        assert_eq!(error, ContractError::MethodNotOffered { name: name.into() });
        assert_eq!(error.wire_code(), codes::CAPABILITY_MISMATCH);
    }
    let mut result = response();
    result["contract"]["methods"]
        .as_array_mut()
        .unwrap()
        .push(json!("tool/call"));
    assert_eq!(
        contract_error(&result),
        ContractError::DuplicateMethod {
            name: "tool/call".into()
        }
    );
    let mut result = response();
    result["contract"]["capabilities"]
        .as_array_mut()
        .unwrap()
        .push(json!("core"));
    assert_eq!(
        contract_error(&result),
        ContractError::DuplicateCapability {
            name: "core".into()
        }
    );
    let mut result = response();
    result["contract"]["methods"] = json!(["$/cancelRequest", 7]);
    assert_eq!(
        reject(&result),
        NegotiationError::WrongType {
            field: "contract.methods[1]".into(),
            expected: "a string"
        }
    );
}

#[test]
fn limits_are_bounded_by_the_offer() {
    for (name, value) in [
        ("max_frame_bytes", 1_048_577u64),
        ("max_concurrent_requests", 65),
        ("max_tools", 257),
    ] {
        let mut result = response();
        result["contract"]["limits"][name] = json!(value);
        let error = contract_error(&result);
        assert_eq!(
            error,
            ContractError::LimitAboveOffer {
                name,
                value,
                offered: value - 1
            }
        );
        assert_eq!(error.wire_code(), codes::RESOURCE_EXHAUSTED);
    }
    // Above a lowered offer, too.
    let lowered = offer().with_max_concurrent_requests(8);
    let error = validate_initialize_result(&hello_world(), &lowered, &response()).unwrap_err();
    assert_eq!(
        error,
        NegotiationError::Contract(ContractError::LimitAboveOffer {
            name: "max_concurrent_requests",
            value: 64,
            offered: 8
        })
    );
    for (name, value) in [
        ("max_frame_bytes", json!(0)),
        ("max_concurrent_requests", json!(0)),
        ("max_tools", json!(-1)),
        ("max_tools", json!("256")),
    ] {
        let mut result = response();
        result["contract"]["limits"][name] = value.clone();
        assert_eq!(
            contract_error(&result),
            ContractError::InvalidLimit {
                name,
                value: value.to_string()
            }
        );
    }
    let mut result = response();
    result["contract"]["limits"]
        .as_object_mut()
        .unwrap()
        .remove("max_tools");
    assert_eq!(
        reject(&result),
        NegotiationError::MissingMember {
            field: "contract.limits.max_tools".into()
        }
    );
    let mut result = response();
    result["contract"]["limits"]["max_bytes"] = json!(1);
    assert_eq!(
        reject(&result),
        NegotiationError::UnknownMember {
            field: "contract.limits.max_bytes".into()
        }
    );
}

#[test]
fn the_tool_count_is_bounded_by_the_selected_max_tools() {
    let mut result = response();
    result["contract"]["limits"]["max_tools"] = json!(0);
    let error = contract_error(&result);
    assert_eq!(
        error,
        ContractError::TooManyTools {
            count: 1,
            max_tools: 0
        }
    );
    assert_eq!(error.wire_code(), codes::RESOURCE_EXHAUSTED);
}

#[test]
fn objects_are_closed_and_commands_are_not_part_of_0_3() {
    let mut result = response();
    result["commands"] = json!([{"name": "hello", "description": "Show a greeting"}]);
    assert_eq!(
        reject(&result),
        NegotiationError::UnknownMember {
            field: "commands".into()
        }
    );
    let mut result = response();
    result["commands"] = json!([]);
    assert_eq!(reject(&result).code(), "unknown_member");
    let mut result = response();
    result["protocol"] = json!({"version": "0.3"});
    assert_eq!(
        reject(&result),
        NegotiationError::UnknownMember {
            field: "protocol".into()
        }
    );
    let mut result = response();
    result["contract"]["features"] = json!([]);
    assert_eq!(
        reject(&result),
        NegotiationError::UnknownMember {
            field: "contract.features".into()
        }
    );
    for member in ["schema", "encoding", "capabilities", "methods", "limits"] {
        let mut result = response();
        result["contract"].as_object_mut().unwrap().remove(member);
        assert_eq!(
            reject(&result),
            NegotiationError::MissingMember {
                field: format!("contract.{member}")
            }
        );
    }
    for member in ["api_version", "tools", "contract"] {
        let mut result = response();
        result.as_object_mut().unwrap().remove(member);
        assert_eq!(
            reject(&result),
            NegotiationError::MissingMember {
                field: member.into()
            }
        );
    }
}

#[test]
fn schema_encoding_and_version_must_match() {
    let mut result = response();
    result["contract"]["schema"] = json!("octet.extension.api/0.2");
    let error = contract_error(&result);
    assert_eq!(
        error,
        ContractError::SchemaMismatch {
            got: "octet.extension.api/0.2".into()
        }
    );
    assert_eq!(error.wire_code(), codes::VERSION_MISMATCH);
    let mut result = response();
    result["contract"]["encoding"] = json!("json");
    assert_eq!(
        contract_error(&result),
        ContractError::EncodingMismatch { got: "json".into() }
    );
    let mut result = response();
    result["api_version"] = json!("0.2");
    assert_eq!(
        reject(&result),
        NegotiationError::ApiVersionMismatch {
            expected: ApiVersion::V0_3,
            got: "0.2".into()
        }
    );
    assert_eq!(
        reject(&json!([])),
        NegotiationError::WrongType {
            field: "result".into(),
            expected: "an object"
        }
    );
}

#[test]
fn tools_are_validated_as_on_0_2_without_negotiable_extras() {
    let mut result = response();
    result["tools"] = json!([]);
    assert!(matches!(
        reject(&result),
        NegotiationError::ToolSetMismatch { .. }
    ));
    // Tool definitions are closed on API 0.3: members of negotiable extras are unknown.
    for member in ["prompt_snippet", "composition", "operation", "x_vendor"] {
        let mut result = response();
        result["tools"][0][member] = json!("anything");
        assert_eq!(
            reject(&result),
            NegotiationError::UnknownMember {
                field: format!("tools[0].{member}")
            }
        );
    }
    // A description is at most 4,096 bytes.
    let mut result = response();
    result["tools"][0]["description"] = json!("d".repeat(4096));
    validate_initialize_result(&hello_world(), &offer(), &result).unwrap();
    result["tools"][0]["description"] = json!("d".repeat(4097));
    assert_eq!(
        reject(&result),
        NegotiationError::DescriptionTooLong {
            field: "tools[0].description".into(),
            bytes: 4097
        }
    );
    let mut result = response();
    result["tools"][0]["output_schema"] = json!({"type": "object", "$ref": "#"});
    assert!(matches!(
        reject(&result),
        NegotiationError::OutputSchemaUnsupported { .. }
    ));
    let mut result = response();
    result["tools"] = json!([hello_tool(), hello_tool()]);
    assert_eq!(
        reject(&result),
        NegotiationError::DuplicateTool {
            name: "hello_world".into()
        }
    );
}
