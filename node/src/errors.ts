/**
 * One error hierarchy for everything the client raises: serve's error objects by their
 * stable `code` (docs/serve-protocol.md, "Replies"), and the client's own faults.
 *
 * Catch `OctetHostError` for all of them, `ServeError` for what serve answered, or one
 * class (`StartError`, `DeadlineExceeded`, `Cancelled`, ...) for one cause.
 */

import { ERROR_CODES } from "./generated.js";

/** serve's error object: a stable `code`, a message for people, and details. */
export interface ErrorObject {
  code: string;
  message: string;
  rpc_code?: number;
  [detail: string]: unknown;
}

/** The base of every error the client raises. */
export class OctetHostError extends Error {
  override name = "OctetHostError";
}

/** No `octet-host` binary was found; the message says where the client looked. */
export class BinaryNotFound extends OctetHostError {
  override name = "BinaryNotFound";
}

/** serve's ready line named a protocol version this client does not speak. */
export class UnsupportedServeProtocol extends OctetHostError {
  override name = "UnsupportedServeProtocol";
  constructor(
    /** The version serve announced. */
    readonly serveProtocol: unknown,
  ) {
    super(
      `octet-host serve speaks serve protocol ${JSON.stringify(serveProtocol)}; this client ` +
        `speaks ${SERVE_PROTOCOL}: install matching versions of the package and the binary`,
    );
  }
}

/** The serve protocol version this client speaks. */
export const SERVE_PROTOCOL = 1;

/** An error serve answered: a control line's reply or a call's result. */
export class ServeError extends OctetHostError {
  override name = "ServeError";
  /** The stable code (`deadline_exceeded`, `unknown_extension`, ...). */
  readonly code: string;
  /** The JSON-RPC code, where one applies. */
  readonly rpcCode: number | undefined;
  /** The whole error object, details included. */
  readonly error: ErrorObject;
  constructor(error: ErrorObject) {
    super(error.message);
    this.code = error.code;
    this.rpcCode = error.rpc_code;
    this.error = error;
  }
}

/** serve went away (it exited, was killed, or closed its output) before answering;
 * every pending promise rejects with it. */
export class HostLost extends ServeError {
  override name = "HostLost";
  constructor(message: string) {
    super({ code: "host_lost", message });
  }
}

/** A control line was malformed or named something that does not exist. */
export class ControlLineError extends ServeError {
  override name = "ControlLineError";
}
/** `cancel` named no active call. */
export class UnknownCallId extends ServeError {
  override name = "UnknownCallId";
}
/** An answer named no open question or service request. */
export class UnknownRequestId extends ServeError {
  override name = "UnknownRequestId";
}

/** `start` or `reload` failed, whatever the cause; `fix` says what to do. */
export class StartError extends ServeError {
  override name = "StartError";
  /** The message with the details that name the cause: what a user acts on. */
  get fix(): string {
    const parts = [this.message];
    for (const key of ["discovered", "diagnostics", "stderr_tail", "first_non_json_line"]) {
      const value = this.error[key];
      if (value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)) {
        parts.push(`${key}: ${JSON.stringify(value)}`);
      }
    }
    return parts.join("\n");
  }
}

/** The extension was not started in this session. */
export class NotStarted extends ServeError {
  override name = "NotStarted";
}
/** The extension's generation is not ready (`state` says where it is). */
export class NotReady extends ServeError {
  override name = "NotReady";
}
/** Automatic restarts stopped (`reason`); a `reload` revives the extension. */
export class Parked extends ServeError {
  override name = "Parked";
}
/** The extension declares no such tool, command, hook, ... */
export class NotDeclared extends ServeError {
  override name = "NotDeclared";
}
/** The extension answered with a JSON-RPC error (`rpcCode`, `error.data`). */
export class RemoteError extends ServeError {
  override name = "RemoteError";
}
/** The call was cancelled (`reason`: `user`, `shutdown`, `dropped`). */
export class Cancelled extends ServeError {
  override name = "Cancelled";
}
/** The call's deadline passed (`after_ms`). */
export class DeadlineExceeded extends ServeError {
  override name = "DeadlineExceeded";
}
/** The extension's process or pipes went away during the call. */
export class TransportLost extends ServeError {
  override name = "TransportLost";
}
/** The answer broke the method's result rules (`path`). */
export class InvalidResult extends ServeError {
  override name = "InvalidResult";
}
/** A destructive menu action was not confirmed; nothing was sent. */
export class Declined extends ServeError {
  override name = "Declined";
}
/** The answer came in a frame serve refuses. */
export class RefusedResponse extends ServeError {
  override name = "RefusedResponse";
}
/** The request exceeds the frame bound (`bytes`, `limit`). */
export class RequestTooLarge extends ServeError {
  override name = "RequestTooLarge";
}
/** Too many calls wait for the extension (`queued`). */
export class Overloaded extends ServeError {
  override name = "Overloaded";
}
/** The request could not be encoded or broke a rule. */
export class InvalidRequest extends ServeError {
  override name = "InvalidRequest";
}
/** A resource value in the arguments was refused (`path`, `resource_error`). */
export class ResourceRefused extends ServeError {
  override name = "ResourceRefused";
}
/** The host is shutting down. */
export class HostShutDown extends ServeError {
  override name = "HostShutDown";
}
/** A notification broke a rule and nothing was sent (`refusal`). */
export class NotificationRefused extends ServeError {
  override name = "NotificationRefused";
}
/** An `agent_report` or `agent_event` was refused; nothing was recorded. */
export class ReportRefused extends ServeError {
  override name = "ReportRefused";
}
/** `getApplicableOperations` was refused (`reason`). */
export class DiscoveryRefused extends ServeError {
  override name = "DiscoveryRefused";
}

/** The classes the schema's error table names, by name. */
const CLASSES: { readonly [K in (typeof ERROR_CODES)[keyof typeof ERROR_CODES]]: ServeErrorClass } = {
  ControlLineError,
  UnknownCallId,
  UnknownRequestId,
  StartError,
  NotStarted,
  NotReady,
  Parked,
  NotDeclared,
  RemoteError,
  Cancelled,
  DeadlineExceeded,
  TransportLost,
  InvalidResult,
  Declined,
  RefusedResponse,
  RequestTooLarge,
  Overloaded,
  InvalidRequest,
  ResourceRefused,
  HostShutDown,
  NotificationRefused,
  ReportRefused,
  DiscoveryRefused,
};

type ServeErrorClass = new (error: ErrorObject) => ServeError;

/** serve's error codes and the class each rejects with (docs/serve-protocol.md), from
 * the schema's `$defs.error_codes`. */
export const ERROR_CLASSES: { readonly [code: string]: ServeErrorClass } = Object.fromEntries(
  Object.entries(ERROR_CODES).map(([code, name]) => [code, CLASSES[name]]),
);

/** The error for serve's error object. With `starting` (a `start` or `reload` reply)
 * every code is a `StartError`, so one `catch` covers a start that failed for any
 * reason. */
export function errorFor(error: ErrorObject, starting = false): ServeError {
  if (starting) return new StartError(error);
  const cls = ERROR_CLASSES[error.code] ?? ServeError;
  return new cls(error);
}

/** The contract names a service may refuse a request with. */
export const REFUSAL_CODES = [
  "unsupported_feature",
  "invalid_request",
  "bounds_exceeded",
  "not_foreground_owner",
  "resource_exhausted",
  "unavailable",
] as const;

/** A contract name a refusal carries. */
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** Thrown by a service method to refuse a request with one of the reference's
 * contract names; the extension receives `"<code>: <message>"`. A method that throws
 * anything else is answered `unavailable` and reported as a `handler_error` event. */
export class Refusal extends OctetHostError {
  override name = "Refusal";
  constructor(
    readonly code: RefusalCode,
    readonly detail = "",
  ) {
    super(detail ? `${code}: ${detail}` : code);
    if (!(REFUSAL_CODES as readonly string[]).includes(code)) {
      throw new TypeError(`a refusal is one of ${REFUSAL_CODES.join(", ")}, not ${JSON.stringify(code)}`);
    }
  }
}
