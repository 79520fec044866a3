/**
 * `Host`: one `octet-host serve` process and the typed client of its control protocol
 * (docs/serve-protocol.md).
 */

import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";

/** serve's process: stdin and stdout piped, stderr inherited or ignored. */
type ServeProcess = ChildProcessByStdio<Writable, Readable, null>;

import { findBinary, type FoundBinary } from "./binary.js";
import {
  Cancelled,
  errorFor,
  HostLost,
  OctetHostError,
  SERVE_PROTOCOL,
  UnsupportedServeProtocol,
  type ErrorObject,
} from "./errors.js";
import { describe, EventHub, type EventName, type HandlerErrorEvent, type HostEvent, type Listener } from "./events.js";
import {
  Operations,
  type CallOutputs,
  type ConfirmationRequestLine,
  type EventLine,
  type InputRequestLine,
  type Json,
  type Members,
  type Op,
  type ReadyLine,
  type Replies,
  type ResultLine,
  type ServiceRequestLine,
  type Services,
  type StartControl,
  type StartReply,
  type StopReply,
} from "./generated.js";
import { ServiceDesk, type ConfirmationHandler, type InputHandler } from "./services.js";

/** How a host is opened: serve's global options and the client's own. */
export interface HostOptions {
  /** Where extensions run and where `.octet/extensions` is searched (`--workspace`). */
  workspace: string;
  /** Explicit extensions (`--extension-dir`, each an extension's directory, its
   * manifest, or a directory of extension directories). */
  extensionDirs?: readonly string[];
  /** Skip `~/.octet/extensions` (`--no-global`; default true). */
  noGlobal?: boolean;
  /** The client is headless: confirmations are denied and input requests cancelled by
   * serve itself (`--no-input`). */
  noInput?: boolean;
  /** How long an extension has to answer `initialize`, in ms (`--startup-timeout`). */
  startupTimeoutMs?: number;
  /** serve's threads ask for prompt wake-ups (default true; false is
   * `--no-prompt-wakeups`). */
  promptWakeups?: boolean;
  /** Every frame to and from extensions comes as a `trace` event (`--wire-trace`). */
  wireTrace?: boolean;
  /** Offer tool composition to every API 0.4 extension (`--tool-composition`). */
  toolComposition?: boolean;
  /** Where composing tools keep their stores (`--composition-store`). */
  compositionStore?: string;
  /** The one deadline of a composing tool's nested calls, in ms
   * (`--composition-timeout`, 100 to 600000). */
  compositionTimeoutMs?: number;
  /** Offer resource refs and operation descriptors (`--resource-refs`). */
  resourceRefs?: boolean;
  /** Make `get_applicable_operations` a host tool (`--operation-discovery`). */
  operationDiscovery?: boolean;
  /** Bulk storage in this directory, offering bulk objects (`--bulk-storage`). */
  bulkStorage?: string;
  /** The binary to run (default: `OCTET_HOST_BIN`, the platform package, `PATH`). */
  binary?: string;
  /** More arguments for serve, as they are. */
  serveArgs?: readonly string[];
  /** serve's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Where serve's stderr goes (default `"inherit"`). */
  stderr?: "inherit" | "ignore";
  /** Answers the extensions' confirmations (denied without it). */
  onConfirmation?: ConfirmationHandler;
  /** Answers the extensions' input requests (cancelled without it). */
  onInput?: InputHandler;
  /** Events an iterator keeps before it drops the oldest (default 4096). */
  eventBuffer?: number;
  /** How long to wait for serve's `ready` line, in ms (default 30000). */
  readyTimeoutMs?: number;
  /** How long `close` waits for the ordered shutdown before it kills serve by pid, in
   * ms (default 10000). */
  shutdownTimeoutMs?: number;
}

/** What a call takes besides its own arguments. */
export interface CallOptions {
  /** The call's deadline in ms (default: the method's, 30 s, or 5 s for `menu`). */
  timeoutMs?: number;
  /** Aborting it cancels the call: the extension receives `$/cancelRequest` and the
   * promise rejects with `Cancelled`. */
  signal?: AbortSignal;
  /** Called with each of the call's progress events, in order. */
  onProgress?: (event: EventLine) => void;
}

/** What `start` takes besides the extension's name. */
export interface StartOptions {
  /** The services this client answers for the extension, as objects by kind. */
  services?: Services;
  /** Runtime-served features to offer it from this start on. */
  features?: StartControl["features"];
  /** How long it has to answer `initialize`, in ms. */
  startupTimeoutMs?: number;
  /** Configures the session's bulk storage there once and offers bulk objects. */
  bulkStorage?: string;
}

/** The ops whose result comes as a `result` line. */
type CallOp = keyof CallOutputs;

interface OpenReply {
  resolve: (members: Record<string, unknown>) => void;
  reject: (error: Error) => void;
  starting: boolean;
}

interface OpenCall {
  resolve: (output: unknown) => void;
  reject: (error: Error) => void;
  onProgress: ((event: EventLine) => void) | undefined;
  cleanup: () => void;
}

/** serve's options for `options`, in the order of its synopsis. */
function serveArgv(options: HostOptions): string[] {
  const argv = ["--workspace", options.workspace];
  for (const dir of options.extensionDirs ?? []) argv.push("--extension-dir", dir);
  const flags: [string, boolean | undefined][] = [
    ["--no-global", options.noGlobal ?? true],
    ["--no-input", options.noInput],
    ["--tool-composition", options.toolComposition],
    ["--resource-refs", options.resourceRefs],
    ["--operation-discovery", options.operationDiscovery],
  ];
  for (const [flag, on] of flags) if (on) argv.push(flag);
  if (options.startupTimeoutMs !== undefined) argv.push("--startup-timeout", `${options.startupTimeoutMs}ms`);
  if (options.compositionStore !== undefined) argv.push("--composition-store", options.compositionStore);
  if (options.compositionTimeoutMs !== undefined) {
    argv.push("--composition-timeout", String(options.compositionTimeoutMs / 1000));
  }
  if (options.bulkStorage !== undefined) argv.push("--bulk-storage", options.bulkStorage);
  argv.push("serve");
  if (options.promptWakeups === false) argv.push("--no-prompt-wakeups");
  if (options.wireTrace) argv.push("--wire-trace");
  return argv.concat(options.serveArgs ?? []);
}

/**
 * One `octet-host serve` session. Open it with `Host.open`, close it with `close` (or
 * `await using`). Every operation is a method; calls take an `AbortSignal` and a
 * progress callback; services are bound as objects at `start`; events come to
 * listeners (`on`) and async iterators (`events`). When serve dies, every pending
 * promise rejects with `HostLost`.
 */
export class Host extends Operations {
  /** serve's `ready` line. */
  readonly ready: ReadyLine;
  /** The binary this host runs, and where it was found. */
  readonly binary: FoundBinary;
  /** serve's process id. */
  readonly pid: number;
  /** The shutdown report, once the session ended in order. */
  report: StopReply["report"] | undefined;

  private readonly child: ServeProcess;
  private readonly hub: EventHub;
  private readonly desk: ServiceDesk;
  private readonly replies = new Map<number, OpenReply>();
  private readonly calls = new Map<number, OpenCall>();
  private readonly shutdownTimeoutMs: number;
  private nextId = 1;
  private nextCallId = 1;
  private lost: HostLost | undefined;
  private closing: Promise<StopReply["report"] | undefined> | undefined;
  private readonly exited: Promise<void>;

  private constructor(child: ServeProcess, binary: FoundBinary, ready: ReadyLine, options: HostOptions, reader: LineReader) {
    super();
    this.child = child;
    this.binary = binary;
    this.ready = ready;
    this.pid = child.pid ?? 0;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
    this.hub = new EventHub(options.eventBuffer ?? 4096);
    this.desk = new ServiceDesk(
      {
        answer: (op, members) => this.request(op, members as never),
        report: (event) => this.hub.emit(event),
      },
      options.onConfirmation,
      options.onInput,
    );
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("close", () => resolve());
    });
    reader.take((line) => this.onLine(line), (why) => this.onLost(why));
  }

  /** Starts `octet-host serve` with `options`, reads its `ready` line and checks its
   * protocol version. Rejects with `BinaryNotFound`, `UnsupportedServeProtocol`, or
   * `HostLost` when serve does not come up. */
  static async open(options: HostOptions): Promise<Host> {
    const binary = findBinary(options.binary);
    const child = spawn(binary.path, serveArgv(options), {
      stdio: ["pipe", "pipe", options.stderr ?? "inherit"],
      env: options.env ?? process.env,
    });
    child.stdin.on("error", () => {
      // serve went away; its stdout's end reports it.
    });
    const reader = new LineReader(child);
    let ready: ReadyLine;
    try {
      ready = await reader.first(options.readyTimeoutMs ?? 30_000, binary);
    } catch (error) {
      child.kill("SIGKILL");
      throw error;
    }
    if (ready.serve_protocol !== SERVE_PROTOCOL) {
      child.kill("SIGKILL");
      throw new UnsupportedServeProtocol(ready.serve_protocol);
    }
    return new Host(child, binary, ready, options, reader);
  }

  // ---- Operations -------------------------------------------------------------------

  /** Sends the control line of `op` and resolves with its reply's members. */
  protected request<O extends Op>(op: O, members: Members<O>): Promise<Replies[O]> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextId++;
    return new Promise<Replies[O]>((resolve, reject) => {
      this.replies.set(id, {
        resolve: resolve as (members: Record<string, unknown>) => void,
        reject,
        starting: op === "start" || op === "reload",
      });
      this.write({ ...members, op, id });
    });
  }

  /** Starts `extension`, binding `options.services`: each kind is an object whose
   * methods answer that kind's requests. Rejects with `StartError` (its `fix` says what
   * to do). */
  async start(extension: string, options: StartOptions = {}): Promise<StartReply> {
    const before = this.desk.bind(extension, options.services);
    const members: Record<string, unknown> = { extension };
    if (options.services) members.services = ServiceDesk.kinds(options.services);
    if (options.features) members.features = options.features;
    if (options.startupTimeoutMs !== undefined) members.startup_timeout_ms = options.startupTimeoutMs;
    if (options.bulkStorage !== undefined) members.bulk_storage = options.bulkStorage;
    try {
      const reply = await this.request("start", members as Members<"start">);
      this.desk.started(extension, reply.api_version);
      return reply;
    } catch (error) {
      this.desk.restore(extension, before);
      throw error;
    }
  }

  /** Starts a candidate generation of `extension` and switches to it once ready; the
   * services the start bound stay bound. */
  async reload(extension: string): Promise<StartReply> {
    const reply = await this.request("reload", { extension });
    this.desk.started(extension, reply.api_version);
    return reply as StartReply;
  }

  /** Shuts `extension` down in order; resolves with the shutdown report. */
  async stop(extension: string): Promise<StopReply["report"]> {
    return (await this.request("stop", { extension })).report;
  }

  /** Calls `tool` of `extension` (`tool/call`). */
  call(extension: string, tool: string, args: { [key: string]: Json } = {}, options: CallOptions = {}): Promise<CallOutputs["call"]> {
    return this.callOp("call", extension, { tool, arguments: args }, options);
  }

  /** Runs the slash command `name` (`command/execute`). */
  command(extension: string, name: string, args: readonly string[] = [], options: CallOptions = {}): Promise<CallOutputs["command"]> {
    return this.callOp("command", extension, { name, arguments: args }, options);
  }

  /** Runs a lifecycle hook (`hook/run`) with its typed payload. */
  hook(extension: string, hook: string, payload: { [key: string]: Json }, options: CallOptions = {}): Promise<CallOutputs["hook"]> {
    return this.callOp("hook", extension, { hook, payload }, options);
  }

  /** Collects context contributions (`context/collect`). */
  context(extension: string, prompt?: string, options: CallOptions = {}): Promise<CallOutputs["context"]> {
    return this.callOp("context", extension, prompt === undefined ? {} : { prompt }, options);
  }

  /** Collects a status contribution (`status/collect`). */
  statusCollect(extension: string, surface?: "status" | "header" | "footer", options: CallOptions = {}): Promise<CallOutputs["status_collect"]> {
    return this.callOp("status_collect", extension, surface === undefined ? {} : { surface }, options);
  }

  /** Renders a tool's output (`tool/render`). */
  render(
    extension: string,
    tool: string,
    args: { [key: string]: Json },
    output: string,
    isError = false,
    options: CallOptions = {},
  ): Promise<CallOutputs["render"]> {
    return this.callOp("render", extension, { tool, arguments: args, output, is_error: isError }, options);
  }

  /** Collects the extension's menu (`menu/collect`). */
  menu(extension: string, options: CallOptions = {}): Promise<CallOutputs["menu"]> {
    return this.callOp("menu", extension, {}, options);
  }

  /** Runs a menu action as `menu` showed it; a destructive one is confirmed first. */
  menuAction(extension: string, item: { [key: string]: Json }, options: CallOptions = {}): Promise<CallOutputs["menu_action"]> {
    return this.callOp("menu_action", extension, { item }, options);
  }

  private callOp<O extends CallOp>(op: O, extension: string, members: Record<string, unknown>, options: CallOptions): Promise<CallOutputs[O]> {
    const { signal, onProgress, timeoutMs } = options;
    if (this.lost) return Promise.reject(this.lost);
    if (signal?.aborted) {
      return Promise.reject(new Cancelled({ code: "cancelled", message: "the call was aborted before it was sent", reason: "user" }));
    }
    const callId = this.nextCallId++;
    return new Promise<CallOutputs[O]>((resolve, reject) => {
      const onAbort = () => {
        this.request("cancel", { call_id: callId }).catch(() => {
          // The call settled first, or serve is gone: its result says how it ended.
        });
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.calls.set(callId, {
        resolve: resolve as (output: unknown) => void,
        reject,
        onProgress,
        cleanup: () => signal?.removeEventListener("abort", onAbort),
      });
      const line: Record<string, unknown> = { ...members, extension, call_id: callId };
      if (timeoutMs !== undefined) line.timeout_ms = timeoutMs;
      this.request(op, line as Members<O>).catch((error: Error) => {
        const call = this.calls.get(callId);
        if (!call) return;
        this.calls.delete(callId);
        call.cleanup();
        call.reject(error);
      });
    });
  }

  // ---- Events -----------------------------------------------------------------------

  /** Calls `listener` with each event of `name` (`progress`, `state`, `tools_changed`,
   * `diagnostic`, `stderr`, `trace`, `host_lost`, `protocol_error`, `handler_error`,
   * `*`, ...). A listener that throws is reported as `handler_error`. */
  on<N extends EventName>(name: N, listener: Listener<N>): this {
    this.hub.on(name, listener);
    return this;
  }

  /** Stops calling `listener` for `name`. */
  off<N extends EventName>(name: N, listener: Listener<N>): this {
    this.hub.off(name, listener);
    return this;
  }

  /** The events from now on, as an async iterator that ends with the host. */
  events(): AsyncIterableIterator<HostEvent> {
    return this.hub.iterate();
  }

  // ---- Closing ----------------------------------------------------------------------

  /** Runs the ordered shutdown and resolves with its report once serve exited. When
   * serve does not answer within `shutdownTimeoutMs`, it is killed by pid (its guardian
   * then ends the extensions) and the report is `undefined`. */
  close(): Promise<StopReply["report"] | undefined> {
    if (!this.closing) {
      this.closing = this.shutDown();
    }
    return this.closing;
  }

  /** The `shutdown` operation: the same as `close`. */
  shutdown(): Promise<StopReply["report"] | undefined> {
    return this.close();
  }

  /** `await using host = await Host.open(...)` closes it at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async shutDown(): Promise<StopReply["report"] | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.shutdownTimeoutMs);
    });
    try {
      if (!this.lost) {
        const reply = this.request("shutdown", {}).then(
          (r) => r.report,
          () => undefined,
        );
        const outcome = await Promise.race([reply, deadline]);
        if (outcome !== "timeout" && outcome !== undefined) this.report = outcome;
        this.child.stdin.end();
      }
      const exited = await Promise.race([this.exited.then(() => "exited" as const), deadline]);
      if (exited === "timeout") this.child.kill("SIGKILL");
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
    this.onLost("the host was closed");
    return this.report;
  }

  // ---- Lines ------------------------------------------------------------------------

  private write(line: Record<string, unknown>): void {
    this.child.stdin.write(JSON.stringify(line) + "\n");
  }

  private onLine(text: string): void {
    let line: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
      line = parsed as Record<string, unknown>;
    } catch (error) {
      this.hub.emit({ type: "event", event: "protocol_error", message: `serve wrote a line that is not a JSON object (${describe(error)})`, line: text.slice(0, 1000) });
      return;
    }
    switch (line.type) {
      case "reply":
        return this.onReply(line);
      case "result":
        return this.onResult(line as unknown as ResultLine);
      case "event":
        return this.onEvent(line as unknown as EventLine);
      case "trace":
        return this.hub.emit(line as unknown as HostEvent);
      case "service_request":
        return this.desk.serve(line as unknown as ServiceRequestLine);
      case "confirmation_request":
      case "input_request":
        return this.desk.question(line as unknown as ConfirmationRequestLine | InputRequestLine);
      case "request_cancelled":
        return this.desk.withdraw(line.request_id as number);
      case "shutdown":
        this.report = line.report as StopReply["report"];
        return;
      default:
        this.hub.emit({ type: "event", event: "protocol_error", message: `serve wrote a line of unknown type ${JSON.stringify(line.type)}`, line: text.slice(0, 1000) });
    }
  }

  private onReply(line: Record<string, unknown>): void {
    const id = line.id;
    const open = typeof id === "number" ? this.replies.get(id) : undefined;
    if (!open) {
      this.hub.emit({ type: "event", event: "protocol_error", message: `serve replied to id ${JSON.stringify(id)}, which this client never sent`, line: JSON.stringify(line).slice(0, 1000) });
      return;
    }
    this.replies.delete(id as number);
    if (line.ok === true) {
      const { type: _type, id: _id, ok: _ok, ...members } = line;
      open.resolve(members);
    } else {
      open.reject(errorFor(line.error as ErrorObject, open.starting));
    }
  }

  private onResult(line: ResultLine): void {
    const call = typeof line.call_id === "number" ? this.calls.get(line.call_id) : undefined;
    if (!call) return;
    this.calls.delete(line.call_id as number);
    call.cleanup();
    if (line.ok) call.resolve(line.output);
    else call.reject(errorFor(line.error as ErrorObject));
  }

  private onEvent(line: EventLine): void {
    if (line.event === "progress" && typeof line.call_id === "number") {
      const call = this.calls.get(line.call_id);
      if (call?.onProgress) {
        try {
          call.onProgress(line);
        } catch (error) {
          this.hub.emit({ type: "event", event: "handler_error", handler: "progress", message: `a progress callback threw: ${describe(error)}` } satisfies HandlerErrorEvent);
        }
      }
    }
    this.hub.emit(line);
  }

  /** serve's output ended: every pending promise rejects with `HostLost`, open service
   * requests are withdrawn and the iterators end. */
  private onLost(why: string): void {
    if (this.lost) return;
    const closing = this.closing !== undefined;
    const code = this.child.exitCode;
    const signal = this.child.signalCode;
    const how = signal ? `killed by ${signal}` : code !== null ? `exit status ${code}` : "still running";
    this.lost = new HostLost(closing ? "the host was closed" : `octet-host serve (pid ${this.pid}) went away: ${why} (${how})`);
    for (const open of this.replies.values()) open.reject(this.lost);
    this.replies.clear();
    for (const call of this.calls.values()) {
      call.cleanup();
      call.reject(this.lost);
    }
    this.calls.clear();
    this.desk.withdrawAll();
    if (!closing) this.hub.emit({ type: "event", event: "host_lost", message: this.lost.message });
    this.hub.end();
  }
}

/** Splits serve's stdout into lines. Until the host takes it, the first line (`ready`)
 * is awaited; afterwards every line goes to the host. */
class LineReader {
  private rest = "";
  private lines: string[] = [];
  private ended: string | undefined;
  private onLine: ((line: string) => void) | undefined;
  private onEnd: ((why: string) => void) | undefined;
  private wake: (() => void) | undefined;

  constructor(child: ServeProcess) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.data(chunk));
    child.once("close", () => this.end("its output ended"));
    child.once("error", (error) => this.end(`it could not run: ${error.message}`));
  }

  private data(chunk: string): void {
    this.rest += chunk;
    let start = 0;
    for (let nl = this.rest.indexOf("\n", start); nl !== -1; nl = this.rest.indexOf("\n", start)) {
      const line = this.rest.slice(start, nl);
      start = nl + 1;
      if (line.trim() === "") continue;
      if (this.onLine) this.onLine(line);
      else this.lines.push(line);
    }
    this.rest = this.rest.slice(start);
    this.wake?.();
  }

  private end(why: string): void {
    if (this.ended !== undefined) return;
    this.ended = why;
    if (this.onEnd) this.onEnd(why);
    this.wake?.();
  }

  /** The ready line, within `timeoutMs`. */
  async first(timeoutMs: number, binary: FoundBinary): Promise<ReadyLine> {
    const started = Date.now();
    while (this.lines.length === 0) {
      if (this.ended !== undefined) {
        throw new HostLost(`octet-host serve (${binary.path}, from ${binary.source}) ended before its ready line: ${this.ended}`);
      }
      const left = timeoutMs - (Date.now() - started);
      if (left <= 0) throw new HostLost(`octet-host serve (${binary.path}) wrote no ready line within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    const text = this.lines.shift() as string;
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new OctetHostError(`octet-host serve's first line is not JSON: ${text.slice(0, 200)}`);
    }
    if (line.type !== "ready") {
      throw new OctetHostError(`octet-host serve's first line is not its ready line: ${text.slice(0, 200)}`);
    }
    return line as unknown as ReadyLine;
  }

  /** Hands every line from now on to `onLine`, and the end to `onEnd`. */
  take(onLine: (line: string) => void, onEnd: (why: string) => void): void {
    this.onLine = onLine;
    this.onEnd = onEnd;
    for (const line of this.lines.splice(0)) onLine(line);
    if (this.ended !== undefined) onEnd(this.ended);
  }
}
