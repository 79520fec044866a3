/**
 * octet-host for Node.js: run `octet-host serve` and drive it as a typed client.
 *
 * ```ts
 * import { Host } from "octet-host";
 * await using host = await Host.open({ workspace: process.cwd() });
 * await host.start("my-extension");
 * const output = await host.call("my-extension", "echo", { text: "hi" });
 * ```
 */

export { Host, type CallOptions, type HostOptions, type StartOptions } from "./host.js";
export { findBinary, platformPackage, type FoundBinary } from "./binary.js";
export * from "./errors.js";
export type { ClientEvent, EventFor, EventName, HandlerErrorEvent, HostEvent, HostLostEvent, Listener, ProtocolErrorEvent } from "./events.js";
export type { ConfirmationHandler, InputHandler } from "./services.js";
export type { ServiceCall } from "./service-call.js";
export * from "./generated.js";
