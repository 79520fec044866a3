/**
 * Serves the `service_request` lines of the services a `start` bound as objects, and
 * the extensions' questions (`confirmation_request`, `input_request`) through the
 * callbacks. Every handler runs on its own promise: one that throws is answered
 * `unavailable` (a denial, a cancelled input) and reported, one that never settles is
 * withdrawn by serve at the runtime's deadline; neither blocks the client.
 */

import { describe, type HandlerErrorEvent } from "./events.js";
import { Refusal, UnknownRequestId } from "./errors.js";
import {
  SERVICE_KINDS,
  type ConfirmationRequestLine,
  type InputRequestLine,
  type MethodRow,
  type ServiceKind,
  type ServiceRequestLine,
  type Services,
} from "./generated.js";
import type { ServiceCall } from "./service-call.js";

/** Answers a confirmation: true confirms. */
export type ConfirmationHandler = (question: ConfirmationRequestLine, withdrawn: AbortSignal) => boolean | Promise<boolean>;
/** Answers an input request: the text, or null to cancel. */
export type InputHandler = (question: InputRequestLine, withdrawn: AbortSignal) => string | null | Promise<string | null>;

/** What the desk needs from the host: sending an answer and reporting a fault. */
export interface DeskHost {
  answer(op: "service_answer" | "answer_confirmation" | "answer_input", members: Record<string, unknown>): Promise<unknown>;
  report(event: HandlerErrorEvent): void;
}

interface Binding {
  services: Services;
  apiVersion?: string;
}

/** The row of `kind` that serves `method`: a row told apart by a params member (the
 * private lane's `session_leaf`) when that member is there, else the plain row, the
 * one of the extension's API version first. */
function route(kind: ServiceKind, method: string, params: Record<string, unknown>, api?: string): MethodRow | undefined {
  const rows = SERVICE_KINDS[kind].methods.filter((row) => row.method === method);
  const marked = rows.filter((row) => row.marker !== null && row.marker in params);
  const found = marked.length ? marked : rows.filter((row) => row.marker === null);
  return found.find((row) => api !== undefined && row.apis.includes(api)) ?? found[0];
}

export class ServiceDesk {
  private readonly bindings = new Map<string, Binding>();
  private readonly open = new Map<number, AbortController>();

  constructor(
    private readonly host: DeskHost,
    private readonly onConfirmation: ConfirmationHandler | undefined,
    private readonly onInput: InputHandler | undefined,
  ) {}

  /** The names `services` binds: every one set, to an object or to null. */
  static kinds(services: Services): string[] {
    return Object.entries(services)
      .filter(([, obj]) => obj !== undefined)
      .map(([kind]) => kind);
  }

  bind(extension: string, services: Services | undefined): Binding | undefined {
    const before = this.bindings.get(extension);
    if (services !== undefined) this.bindings.set(extension, { services });
    return before;
  }

  restore(extension: string, before: Binding | undefined): void {
    if (before) this.bindings.set(extension, before);
    else this.bindings.delete(extension);
  }

  started(extension: string, apiVersion: string): void {
    const binding = this.bindings.get(extension);
    if (binding) binding.apiVersion = apiVersion;
  }

  /** serve withdrew request `id` (`request_cancelled`). */
  withdraw(id: number): void {
    const controller = this.open.get(id);
    this.open.delete(id);
    controller?.abort(new Error("serve withdrew the request"));
  }

  /** The session ended: every open request is withdrawn. */
  withdrawAll(): void {
    for (const id of [...this.open.keys()]) this.withdraw(id);
  }

  /** Serves one `service_request` line. */
  serve(line: ServiceRequestLine): void {
    const controller = new AbortController();
    this.open.set(line.request_id, controller);
    const call: ServiceCall = {
      requestId: line.request_id,
      extension: line.extension,
      generation: line.generation,
      kind: line.kind,
      method: line.method,
      owner: line.owner as Record<string, unknown>,
      ...(line.parent_request_id === undefined ? {} : { parentRequestId: line.parent_request_id }),
      independent: line.independent,
      withdrawn: controller.signal,
    };
    const params = (line.params ?? {}) as Record<string, unknown>;
    const binding = this.bindings.get(line.extension);
    const kind = line.kind as ServiceKind;
    const obj = binding?.services[kind] as Record<string, unknown> | undefined;
    const row = obj && kind in SERVICE_KINDS ? route(kind, line.method, params, binding?.apiVersion) : undefined;
    const handler = row && obj ? obj[row.fn] : undefined;
    const settle = (members: Record<string, unknown>) => {
      if (controller.signal.aborted) return;
      this.open.delete(line.request_id);
      if (row?.notification) return;
      this.send("service_answer", { request_id: line.request_id, ...members }, call);
    };
    if (typeof handler !== "function") {
      const what = obj ? `${line.method} is not served` : `this client binds no ${line.kind} service for ${line.method}`;
      settle({ refusal: "unsupported_feature", message: what });
      return;
    }
    Promise.resolve()
      .then(() => (handler as (p: unknown, c: ServiceCall) => unknown).call(obj, params, call))
      .then(
        (result) => settle({ result: result === undefined || result === null ? {} : result }),
        (error: unknown) => {
          if (error instanceof Refusal) {
            settle({ refusal: error.code, message: error.detail });
            return;
          }
          this.host.report({
            type: "event",
            event: "handler_error",
            handler: "service",
            extension: line.extension,
            method: line.method,
            request_id: line.request_id,
            message: describe(error),
          });
          settle({ refusal: "unavailable", message: `the client's handler threw ${error instanceof Error ? error.name : typeof error}` });
        },
      );
  }

  /** Answers one question through its callback (a denial or a cancelled input without
   * one, or when it throws). */
  question(line: ConfirmationRequestLine | InputRequestLine): void {
    const controller = new AbortController();
    this.open.set(line.request_id, controller);
    const confirmation = line.type === "confirmation_request";
    const ask = (): unknown =>
      confirmation
        ? this.onConfirmation?.(line, controller.signal)
        : this.onInput?.(line as InputRequestLine, controller.signal);
    Promise.resolve()
      .then(ask)
      .catch((error: unknown) => {
        this.host.report({
          type: "event",
          event: "handler_error",
          handler: confirmation ? "confirmation" : "input",
          extension: line.extension,
          method: line.type,
          request_id: line.request_id,
          message: describe(error),
        });
        return undefined;
      })
      .then((value) => {
        if (controller.signal.aborted) return;
        this.open.delete(line.request_id);
        if (confirmation) {
          this.send("answer_confirmation", { request_id: line.request_id, confirmed: value === true });
        } else {
          this.send("answer_input", { request_id: line.request_id, value: typeof value === "string" ? value : null });
        }
      });
  }

  private send(op: "service_answer" | "answer_confirmation" | "answer_input", members: Record<string, unknown>, call?: ServiceCall): void {
    this.host.answer(op, members).catch((error: unknown) => {
      // Withdrawn while the answer travelled: serve no longer knows the id.
      if (error instanceof UnknownRequestId) return;
      this.host.report({
        type: "event",
        event: "handler_error",
        handler: "answer",
        ...(call ? { extension: call.extension, method: call.method } : {}),
        request_id: members.request_id as number,
        message: describe(error),
      });
    });
  }
}
