import { isRecord, providerRequest, snippet } from "../http";
import { ProviderError } from "../types";

// Lambda Cloud's REST API v1 (docs.lambda.ai, the Cloud API reference), as documented: JSON under
// the /api/v1 base, the key as a Bearer token (the docs also accept it as Basic auth's username),
// successful answers wrapped in `data`, and errors as `{error: {code, message, suggestion?}}` with
// codes such as `global/invalid-api-key`, `global/object-does-not-exist`,
// `global/invalid-parameters`, `global/quota-exceeded` and
// `instance-operations/launch/insufficient-capacity`. Launches are rate limited (429). Field names
// below are Lambda's.

export interface LambdaConfig {
  url: string;
  key: string;
  timeoutMs: number;
}

export interface LambdaInstanceType {
  instance_type: {
    name: string;
    description?: string;
    gpu_description?: string;
    price_cents_per_hour: number;
    specs?: { gpus?: number; vcpus?: number; memory_gib?: number; storage_gib?: number };
  };
  regions_with_capacity_available: Array<{ name: string; description?: string }>;
}

export interface LambdaInstance {
  id: string;
  name?: string | null;
  /** booting | active | unhealthy | terminating | terminated */
  status: string;
  ip?: string | null;
  region?: { name: string };
  instance_type?: { name: string };
}

export interface LambdaLaunch {
  region_name: string;
  instance_type_name: string;
  ssh_key_names: string[];
  quantity: number;
  name: string;
  /** cloud-init user data (a shell script runs at first boot), at most 1 MB */
  user_data: string;
}

async function call(cfg: LambdaConfig, what: string, method: "GET" | "POST", path: string, body?: unknown) {
  const res = await providerRequest({
    provider: "lambda",
    method,
    url: `${cfg.url.replace(/\/+$/, "")}${path}`,
    headers: { authorization: `Bearer ${cfg.key}` },
    body,
    timeoutMs: cfg.timeoutMs,
    what,
  });
  if (res.status >= 200 && res.status < 300 && isRecord(res.body) && "data" in res.body) return { ok: true as const, data: res.body.data };
  const err = isRecord(res.body) && isRecord(res.body.error) ? res.body.error : null;
  const code = err && typeof err.code === "string" ? err.code : `http/${res.status}`;
  const message = err && typeof err.message === "string" ? err.message : `answered ${res.status}${snippet(res.text)}`;
  return { ok: false as const, status: res.status, code, message: `${what}: ${message} (${code})` };
}

function fail(r: { status: number; code: string; message: string }): never {
  if (r.code === "instance-operations/launch/insufficient-capacity") throw new ProviderError("lambda", "capacity", r.message);
  if (r.code === "global/invalid-api-key" || r.code === "global/account-inactive" || r.status === 401 || r.status === 403)
    throw new ProviderError("lambda", "auth", r.message);
  throw new ProviderError("lambda", "rejected", r.message);
}

/** GET /instance-types: every instance type with its price and the regions that have capacity now. */
export async function instanceTypes(cfg: LambdaConfig): Promise<LambdaInstanceType[]> {
  const r = await call(cfg, "list offers", "GET", "/instance-types");
  if (!r.ok) fail(r);
  return isRecord(r.data) ? Object.values(r.data).filter((t): t is LambdaInstanceType => isRecord(t) && isRecord(t.instance_type)) : [];
}

/** POST /instance-operations/launch: the new instance's id (one instance per call). */
export async function launchInstance(cfg: LambdaConfig, input: LambdaLaunch): Promise<string> {
  const r = await call(cfg, "launch", "POST", "/instance-operations/launch", input);
  if (!r.ok) fail(r);
  const ids = isRecord(r.data) && Array.isArray(r.data.instance_ids) ? r.data.instance_ids : [];
  if (typeof ids[0] !== "string") throw new ProviderError("lambda", "unavailable", "launch: Lambda answered without an instance id");
  return ids[0];
}

/** GET /instances/{id}; null when Lambda no longer has it (global/object-does-not-exist). */
export async function getInstance(cfg: LambdaConfig, id: string): Promise<LambdaInstance | null> {
  const r = await call(cfg, "instance status", "GET", `/instances/${encodeURIComponent(id)}`);
  if (!r.ok) {
    if (r.code === "global/object-does-not-exist" || r.status === 404) return null;
    fail(r);
  }
  return isRecord(r.data) && typeof r.data.id === "string" ? (r.data as unknown as LambdaInstance) : null;
}

/** GET /instances: the account's running instances. */
export async function listInstances(cfg: LambdaConfig): Promise<LambdaInstance[]> {
  const r = await call(cfg, "list instances", "GET", "/instances");
  if (!r.ok) fail(r);
  return (Array.isArray(r.data) ? r.data : []).filter((i): i is LambdaInstance => isRecord(i) && typeof i.id === "string");
}

/** POST /instance-operations/terminate; an instance Lambda no longer has is already what we asked for. */
export async function terminateInstance(cfg: LambdaConfig, id: string): Promise<void> {
  const r = await call(cfg, "terminate", "POST", "/instance-operations/terminate", { instance_ids: [id] });
  if (r.ok) return;
  if (r.code === "global/object-does-not-exist" || r.status === 404) return;
  fail(r);
}
