// What can go wrong talking to a BMC, as the operator needs to hear it (pure). Every failure of the
// Redfish client is one of these kinds, so the provisioning workflow, the power route and the node
// page can say which one happened and what to do about it, instead of showing a stack trace.

export const REDFISH_FAILURES = [
  // no TCP connection, a reset, a name that does not resolve, no answer in time
  "unreachable",
  // the BMC's certificate is not one we were told to trust
  "tls_untrusted",
  // the URL (or what its name resolved to) is an address BMCs may not have here (BMC_NETWORKS)
  "address_refused",
  // 401/403 after a fresh login: the username or password is wrong, or the account may not do this
  "credentials_refused",
  // the virtual media device would not take the image (bad URL, unreachable image, wrong type)
  "media_refused",
  // the BMC offers no way to do what was asked (no Reset action, no CD/DVD virtual media, …)
  "not_supported",
  // a 202 task ended in Exception, Killed or Cancelled
  "task_failed",
  // waited longer than allowed: a task, a power state, the BMC's "not ready" answers
  "timeout",
  // any other refusal of the request (4xx)
  "refused",
  // 5xx after every retry
  "server_error",
  // an answer that is not Redfish: not JSON, a link to another host, missing required members
  "bad_answer",
] as const;
export type RedfishFailure = (typeof REDFISH_FAILURES)[number];

export class RedfishError extends Error {
  constructor(
    readonly kind: RedfishFailure,
    message: string,
    readonly detail: { status?: number; messageIds?: string[]; path?: string } = {},
  ) {
    super(message);
    this.name = "RedfishError";
  }
}

export function isRedfishError(e: unknown): e is RedfishError {
  return e instanceof RedfishError || (e instanceof Error && e.name === "RedfishError" && "kind" in e);
}

/** A one-line headline per kind, for alerts and the node page. */
export const FAILURE_HEADLINES: Record<RedfishFailure, string> = {
  unreachable: "BMC unreachable",
  tls_untrusted: "BMC certificate not trusted",
  address_refused: "BMC address refused",
  credentials_refused: "BMC credentials refused",
  media_refused: "Virtual media refused",
  not_supported: "Not supported by this BMC",
  task_failed: "BMC task failed",
  timeout: "BMC timed out",
  refused: "BMC refused the request",
  server_error: "BMC error",
  bad_answer: "Not a Redfish answer",
};
