import "server-only";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { RedfishClient, type Exchange, type RedfishTiming, type Resource } from "@/lib/redfish/client";
import { FAILURE_HEADLINES, isRedfishError, type RedfishError } from "@/lib/redfish/errors";
import { discoverSystem } from "@/lib/redfish/operations";
import { text } from "@/lib/redfish/resources";
import { recordBmcContact, recordBmcFailure, type OpenedBmc } from "./open-bmc";

// One conversation with a node's BMC: log in, find the node's system from the service root, do
// the work, log out; the node's BMC row records when it last answered, or how it failed.

export interface NodeRedfishOptions {
  record?: (e: Exchange) => void;
  timing?: Partial<RedfishTiming>;
  /** stops the conversation: nothing more is sent once it aborts */
  signal?: AbortSignal;
}

export function nodeRedfishClient(opened: OpenedBmc, opts: NodeRedfishOptions = {}): RedfishClient {
  return new RedfishClient(opened.target, {
    timing: { timeoutMs: env().BMC_TIMEOUT_S * 1000, ...opts.timing },
    ...(opts.record ? { record: opts.record } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/** Connects, discovers the node's system, runs `fn`, logs out; the contact or the failure is recorded on the node's BMC. */
export async function withNodeSystem<T>(
  opened: OpenedBmc,
  fn: (c: RedfishClient, system: Resource) => Promise<T>,
  opts: NodeRedfishOptions = {},
): Promise<T> {
  const c = nodeRedfishClient(opened, opts);
  try {
    await c.connect();
    const system = await discoverSystem(c, { systemId: opened.systemId, hostname: opened.node.hostname });
    const out = await fn(c, system);
    await recordBmcContact(opened.node.id, {
      system: system.path,
      power_state: text(system.json.PowerState) || null,
      manufacturer: text(system.json.Manufacturer) || null,
      model: text(system.json.Model) || null,
      auth: c.authMode === "session" ? "session" : "basic",
    });
    return out;
  } catch (e) {
    if (isRedfishError(e)) await recordBmcFailure(opened.node.id, e);
    throw e;
  } finally {
    await c.close();
  }
}

/** The field of the node's BMC a failure is about, for the error's details. */
const FIELD: Partial<Record<RedfishError["kind"], string>> = {
  unreachable: "bmc.url",
  tls_untrusted: "bmc.ca_pem",
  address_refused: "bmc.url",
  credentials_refused: "bmc.password",
  media_refused: "image_url",
};

/** A Redfish failure as the API's error: 504 when the BMC ran out of time, 502 otherwise, naming the kind. */
export function redfishFailureToAppError(e: RedfishError): AppError {
  return new AppError(e.kind === "timeout" ? "gateway_timeout" : "bad_gateway", `${FAILURE_HEADLINES[e.kind]}: ${e.message}`, [
    { path: FIELD[e.kind] ?? "bmc", message: e.kind },
  ]);
}
