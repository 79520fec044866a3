/**
 * The host's events: serve's `event` and `trace` lines, and the client's own (`host_lost`,
 * `protocol_error`, `handler_error`), delivered to listeners and to async iterators.
 */

import type { EventLine, TraceLine } from "./generated.js";

/** serve went away before the client closed it. */
export interface HostLostEvent {
  type: "event";
  event: "host_lost";
  message: string;
}

/** serve wrote a line the client could not read; the line is skipped. */
export interface ProtocolErrorEvent {
  type: "event";
  event: "protocol_error";
  message: string;
  /** The line, cut to 1,000 characters. */
  line: string;
}

/** Code the embedder gave the client threw: a service method, a question callback,
 * a progress callback or an event listener. The client answered for it (`unavailable`,
 * a denial, a cancelled input) and went on. */
export interface HandlerErrorEvent {
  type: "event";
  event: "handler_error";
  handler: "service" | "confirmation" | "input" | "progress" | "listener" | "answer";
  message: string;
  extension?: string;
  method?: string;
  request_id?: number;
}

/** An event the client makes itself. */
export type ClientEvent = HostLostEvent | ProtocolErrorEvent | HandlerErrorEvent;

/** Every event a host delivers. */
export type HostEvent = EventLine | TraceLine | ClientEvent;

/** What a listener listens to: an event kind (`progress`, `state`, `tools_changed`,
 * `diagnostic`, ...), `trace`, `stderr` (a diagnostic of kind `stderr`), one of the
 * client's own, or `*` for every event. */
export type EventName = EventLine["event"] | ClientEvent["event"] | "trace" | "stderr" | "*";

/** The event a listener of `N` receives: a `trace` line, the client's own event of
 * that name, every event for `*`, else one of serve's `event` lines. */
export type EventFor<N extends EventName> = N extends "trace"
  ? TraceLine
  : N extends ClientEvent["event"]
    ? Extract<ClientEvent, { event: N }>
    : N extends "*"
      ? HostEvent
      : EventLine;

/** A function called with each event of its name. */
export type Listener<N extends EventName = "*"> = (event: EventFor<N>) => void;

/** The names an event is delivered under. */
function namesOf(event: HostEvent): string[] {
  if (event.type === "trace") return ["trace", "*"];
  const names: string[] = [event.event, "*"];
  if (event.event === "diagnostic" && (event as { kind?: string }).kind === "stderr") names.push("stderr");
  return names;
}

/** One async iterator's queue: events wait here until it asks for them. */
class Queue implements AsyncIterableIterator<HostEvent> {
  private items: HostEvent[] = [];
  private waiting: ((result: IteratorResult<HostEvent>) => void) | undefined;
  private ended = false;
  /** Events dropped because the iterator fell `limit` behind. */
  dropped = 0;

  constructor(
    private readonly limit: number,
    private readonly onReturn: (queue: Queue) => void,
  ) {}

  push(event: HostEvent): void {
    if (this.ended) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: event, done: false });
      return;
    }
    if (this.items.length >= this.limit) {
      this.items.shift();
      this.dropped += 1;
    }
    this.items.push(event);
  }

  end(): void {
    this.ended = true;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<HostEvent>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<HostEvent>> {
    this.items = [];
    this.end();
    this.onReturn(this);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<HostEvent> {
    return this;
  }
}

/** Delivers events to listeners and iterators. A listener that throws is reported as a
 * `handler_error` event and never stops delivery. */
export class EventHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly queues = new Set<Queue>();
  private ended = false;

  constructor(private readonly buffer: number) {}

  on<N extends EventName>(name: N, listener: Listener<N>): void {
    let set = this.listeners.get(name);
    if (!set) {
      set = new Set();
      this.listeners.set(name, set);
    }
    // Delivered only events of `name` (namesOf), which are `EventFor<N>`.
    set.add(listener as unknown as Listener);
  }

  off<N extends EventName>(name: N, listener: Listener<N>): void {
    this.listeners.get(name)?.delete(listener as unknown as Listener);
  }

  /** An iterator of the events from now on, which ends when the host does. */
  iterate(): AsyncIterableIterator<HostEvent> {
    const queue = new Queue(this.buffer, (q) => this.queues.delete(q));
    if (this.ended) queue.end();
    else this.queues.add(queue);
    return queue;
  }

  emit(event: HostEvent): void {
    for (const queue of this.queues) queue.push(event);
    for (const name of namesOf(event)) {
      for (const listener of this.listeners.get(name) ?? []) {
        try {
          listener(event);
        } catch (error) {
          if (event.type === "event" && event.event === "handler_error") continue;
          this.emit({
            type: "event",
            event: "handler_error",
            handler: "listener",
            message: `a listener of ${name} threw: ${describe(error)}`,
          });
        }
      }
    }
  }

  /** Ends every iterator: nothing more will come. */
  end(): void {
    this.ended = true;
    for (const queue of this.queues) queue.end();
    this.queues.clear();
  }
}

/** An error's type and text, for an event's message. */
export function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
