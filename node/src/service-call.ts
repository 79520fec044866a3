/** Who asks a service request, and for what: the members of its `service_request`
 * line besides the params, and a signal that is aborted once the answer is no longer
 * wanted. */
export interface ServiceCall {
  /** serve's id of the request (`request_id`). */
  readonly requestId: number;
  /** The extension that sent it. */
  readonly extension: string;
  /** Its generation. */
  readonly generation: number;
  /** The service kind the request is for (`composer`, `agent_sessions`, ...). */
  readonly kind: string;
  /** The wire method (`composer/set`, ...). */
  readonly method: string;
  /** The resource owner the runtime derived (reference section 2). */
  readonly owner: { readonly [key: string]: unknown };
  /** The host request the extension named as parent (absent on API 0.3 methods). */
  readonly parentRequestId?: number;
  /** True when the parent had settled and the explicit owner was admitted. */
  readonly independent: boolean;
  /** Aborted when serve withdraws the request (the parent settled, the extension
   * cancelled it, its deadline passed, or the session ends): the extension has been
   * answered already, and what the handler returns afterwards is dropped. */
  readonly withdrawn: AbortSignal;
}
