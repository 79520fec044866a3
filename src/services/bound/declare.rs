//! The macros that turn the method table (`table.rs`) into code. The table is written
//! once and expanded in two parts by [`declare_table!`], so that what sits low in the
//! module graph and what sits high never import each other in a circle: the `methods`
//! part (in `methods.rs`) makes the [`ServiceKind`](super::ServiceKind) and
//! [`ServiceMethod`](super::ServiceMethod) enums with every column of a row and the
//! typed [`ServiceRequest`](super::ServiceRequest) (parsed by reading the row's params
//! type and checking its bounds) with the result rules (the row's result type); the
//! `services` part (in `services.rs`) makes each kind's service trait with a default
//! body per method, the routing from a request to its trait method, and the kind's
//! binder on [`ServiceBindings`](super::ServiceBindings).

/// How many token trees follow.
macro_rules! count {
    () => { 0 };
    ($head:tt $($tail:tt)*) => { 1 + count!($($tail)*) };
}

/// A method's [`Shape`](super::Shape) from its row's first word.
macro_rules! shape_of {
    (request) => {
        Shape::Request
    };
    (guarded) => {
        Shape::Request
    };
    (notification) => {
        Shape::Notification
    };
}

/// Whether a row's requests are answered by its kind's guard from the runtime's own
/// state (a `guarded` row), never by the service.
macro_rules! guarded_of {
    (guarded) => {
        true
    };
    ($other:ident) => {
        false
    };
}

/// A kind's [`Lane`](super::Lane): concurrent unless its block names one.
macro_rules! lane_of {
    () => {
        Lane::Concurrent
    };
    ($lane:ident) => {
        Lane::$lane
    };
}

/// A service trait's method for one row, with the default body that refuses
/// `unsupported_feature` (a notification's default ignores it).
macro_rules! service_fn {
    (request, [$(#[$doc:meta])*], $fn_name:ident, $params:ty, $result:ty) => {
        $(#[$doc])*
        fn $fn_name(&self, call: ServiceCall, params: $params, reply: Reply<$result>) {
            reply.unsupported(&call);
        }
    };
    (notification, [$(#[$doc:meta])*], $fn_name:ident, $params:ty, $result:ty) => {
        $(#[$doc])*
        ///
        /// A notification: nothing is answered.
        fn $fn_name(&self, call: ServiceCall, params: $params) {}
    };
    (guarded, [$(#[$doc:meta])*], $fn_name:ident, $params:ty, $result:ty) => {};
}

/// Hands one request to its trait method: a request with its typed reply, a
/// notification with none (its detached reply is discarded).
macro_rules! route_fn {
    (request, $service:expr, $fn_name:ident, $call:ident, $params:ident, $reply:ident) => {
        $service.$fn_name($call, $params, Reply::new($reply))
    };
    (notification, $service:expr, $fn_name:ident, $call:ident, $params:ident, $reply:ident) => {{
        $service.$fn_name($call, $params);
        $reply.discard();
    }};
    (guarded, $service:expr, $fn_name:ident, $call:ident, $params:ident, $reply:ident) => {{
        let _ = ($call, $params);
        $reply.refuse(
            $crate::services::bound::Refusal::UnsupportedFeature
                .because("the runtime answers this method itself; no service serves it"),
        )
    }};
}

/// The method table turned into code, one part at a time: `methods` makes the enums
/// of the table and the typed request ([`ServiceKind`](super::ServiceKind),
/// [`ServiceMethod`](super::ServiceMethod) with every column of a row,
/// [`ServiceRequest`](super::ServiceRequest) with its parsing and the result rules;
/// expanded in `methods.rs`), `services` each kind's service trait (a default body per
/// method), the routing from a request to its trait method and the kind's binder on
/// [`ServiceBindings`](super::ServiceBindings) (expanded in `services.rs`). One matcher
/// reads the rows; [`part!`] keeps the part asked for.
macro_rules! declare_table {
    ($part:ident; $(
        $(#[$kind_doc:meta])*
        kind $kind:ident = $kind_name:literal, offered by $offer:expr,
            served by $service:ident, bound with $binder:ident $(, lane $lane:ident)? {
            $(
                $(#[$method_doc:meta])*
                $shape:ident $method:ident = $name:literal,
                    fn $fn_name:ident($params:ty) -> $result:ty,
                    apis $apis:expr, admission $admission:ident, family $family:ident,
                    sensitive $sensitive:literal;
            )*
        }
    )*) => {
        part!($part, methods, {
        /// A service an embedder can bind, named by its feature or capability.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ServiceKind {
            $($(#[$kind_doc])* $kind,)*
        }

        impl ServiceKind {
            /// Every kind, in the table's order.
            pub const ALL: [ServiceKind; count!($($kind)*)] = [$(ServiceKind::$kind,)*];

            /// The feature or capability name, such as `composer` or `provider_auth`.
            pub fn name(self) -> &'static str {
                match self {
                    $(ServiceKind::$kind => $kind_name,)*
                }
            }

            /// What offers it in `initialize`.
            pub fn offer(self) -> Offer {
                match self {
                    $(ServiceKind::$kind => $offer,)*
                }
            }

            /// How its requests reach its service.
            pub fn lane(self) -> Lane {
                match self {
                    $(ServiceKind::$kind => lane_of!($($lane)?),)*
                }
            }
        }

        /// An extension-to-host method served by a bound service, one per row of the
        /// method table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ServiceMethod {
            $($($(#[$method_doc])* $method,)*)*
        }

        impl ServiceMethod {
            /// Every method, in the table's order.
            pub const ALL: [ServiceMethod; count!($($($method)*)*)] =
                [$($(ServiceMethod::$method,)*)*];

            /// The wire method name.
            pub fn name(self) -> &'static str {
                match self {
                    $($(ServiceMethod::$method => $name,)*)*
                }
            }

            /// The name of the service trait's method that serves it, such as `get` or
            /// `append_entry` (other languages' service classes use the same names).
            pub fn fn_name(self) -> &'static str {
                match self {
                    $($(ServiceMethod::$method => stringify!($fn_name),)*)*
                }
            }

            /// The service that serves it.
            pub fn kind(self) -> ServiceKind {
                match self {
                    $($(ServiceMethod::$method => ServiceKind::$kind,)*)*
                }
            }

            /// The API versions that carry it.
            pub fn apis(self) -> &'static [ApiVersion] {
                match self {
                    $($(ServiceMethod::$method => $apis,)*)*
                }
            }

            /// How the dispatcher admits its requests.
            pub fn admission(self) -> Admission {
                match self {
                    $($(ServiceMethod::$method => Admission::$admission,)*)*
                }
            }

            /// The error vocabulary of its refusals.
            pub fn family(self) -> ErrorFamily {
                match self {
                    $($(ServiceMethod::$method => ErrorFamily::$family,)*)*
                }
            }

            /// Request or notification.
            pub fn shape(self) -> Shape {
                match self {
                    $($(ServiceMethod::$method => shape_of!($shape),)*)*
                }
            }

            /// True when the kind's guard answers its requests from the runtime's own
            /// state (a `guarded` row): no service ever sees them.
            pub fn is_guarded(self) -> bool {
                match self {
                    $($(ServiceMethod::$method => guarded_of!($shape),)*)*
                }
            }

            /// True when its answer may carry a secret: the frame is wiped after
            /// writing and the answer never reaches a trace.
            pub fn is_sensitive(self) -> bool {
                match self {
                    $($(ServiceMethod::$method => $sensitive,)*)*
                }
            }

            /// Checks a result before the extension sees it: the closed shape and the
            /// bounds of the row's result type.
            pub fn check_result(self, result: &Value) -> Result<(), String> {
                match self {
                    $($(ServiceMethod::$method => <$result as ServiceResult>::check(result),)*)*
                }
            }
        }

        /// A validated request of a bound method: the row's params type, without
        /// `parent_request_id` and `resource_owner`, every bound already checked.
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum ServiceRequest {
            $($($(#[$method_doc])* $method($params),)*)*
        }

        impl ServiceRequest {
            /// The method.
            pub fn method(&self) -> ServiceMethod {
                match self {
                    $($(ServiceRequest::$method(_) => ServiceMethod::$method,)*)*
                }
            }

            /// The validated params as JSON (what `serve` shows its client).
            pub fn params(&self) -> Value {
                match self {
                    $($(ServiceRequest::$method(params) => {
                        serde_json::to_value(params).expect("plain data serializes")
                    })*)*
                }
            }

            /// Checks the params of `method` into a typed request: the row's closed
            /// params type, then its bounds. `parent_request_id` and `resource_owner`
            /// belong to admission and are skipped for the methods that name a parent.
            pub fn parse(
                method: ServiceMethod,
                params: &Map<String, Value>,
            ) -> Result<Self, ServiceRefusal> {
                let mut params = params.clone();
                if method.admission().names_parent() {
                    params.remove("parent_request_id");
                    params.remove("resource_owner");
                }
                let params = Value::Object(params);
                match method {
                    $($(ServiceMethod::$method => {
                        let params: $params = closed(params)?;
                        <$params as ServiceParams>::check(&params)?;
                        Ok(ServiceRequest::$method(params))
                    })*)*
                }
            }
        }
        });
        part!($part, services, {
        $(
            $(#[$kind_doc])*
            ///
            /// Every method gets the [`ServiceCall`] (who asks, the derived owner, a
            /// cancellation flag), the typed params the runtime already checked, and a
            /// [`Reply`] to answer exactly once. It runs on a thread of its own, never
            /// the dispatcher's: it may block, or keep the reply and answer later from
            /// another thread. Every method has a default body that refuses
            /// `unsupported_feature`, so a binding written before a method was added
            /// keeps compiling and refuses the new method.
            #[allow(unused_variables)] // default bodies refuse without reading the params
            pub trait $service: Send + Sync + 'static {
                $(service_fn!($shape, [$(#[$method_doc])*], $fn_name, $params, $result);)*
            }

            impl RawService for Routed<dyn $service> {
                fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
                    match request {
                        $(ServiceRequest::$method(params) => {
                            route_fn!($shape, self.0, $fn_name, call, params, reply)
                        })*
                        other => misrouted(&other, reply),
                    }
                }
            }

            impl ServiceBindings {
                #[doc = concat!("Binds `", $kind_name, "`: the [`", stringify!($service), "`] that serves its methods.")]
                pub fn $binder(self, service: impl $service) -> ServiceBindings {
                    let service: Arc<dyn $service> = Arc::new(service);
                    self.bind(ServiceKind::$kind, Arc::new(Routed(service)))
                }
            }
        )*
        });
    };
}

/// Emits the tokens when the part asked for is this one, nothing otherwise.
macro_rules! part {
    (methods, methods, {$($tokens:tt)*}) => { $($tokens)* };
    (services, services, {$($tokens:tt)*}) => { $($tokens)* };
    ($asked:ident, $this:ident, {$($tokens:tt)*}) => {};
}

/// The host-to-extension notifications of bound kinds.
macro_rules! host_notifications {
    ($($(#[$doc:meta])* $notification:ident = $name:literal, $feature:ident,
        members $members:expr, from the client: $client:literal;)*) => {
        /// A host-to-extension notification of a bound kind (sections 1.11, 2.24), one per
        /// row: its name, the feature whose negotiation gates it, its closed params, and
        /// whether a `serve` client sends it with `notify` (or the host composes it).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum HostNotification {
            $($(#[$doc])* $notification,)*
        }

        impl HostNotification {
            /// Every notification, in the table's order.
            pub const ALL: [HostNotification; count!($($notification)*)] =
                [$(HostNotification::$notification,)*];

            /// The wire method name.
            pub fn name(self) -> &'static str {
                match self {
                    $(HostNotification::$notification => $name,)*
                }
            }

            /// The feature that must be negotiated before it is sent.
            pub fn feature(self) -> Feature {
                match self {
                    $(HostNotification::$notification => Feature::$feature,)*
                }
            }

            /// The members of its closed params.
            pub fn members(self) -> &'static [&'static str] {
                match self {
                    $(HostNotification::$notification => $members,)*
                }
            }

            /// True when `serve`'s `notify` sends it as the client gives it; false when
            /// the host composes it (`message/updated` batches).
            pub fn from_client(self) -> bool {
                match self {
                    $(HostNotification::$notification => $client,)*
                }
            }
        }
    };
}
