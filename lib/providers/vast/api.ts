import { isRecord, providerRequest, snippet } from "../http";
import { ProviderError } from "../types";

// Vast.ai's API (docs.vast.ai, the API reference), as documented: the /api/v0 base, the key as
// `Authorization: Bearer`, offers from GET /bundles/ with a JSON query in `q` (field filters such as
// {"rentable": {"eq": true}}, "type": "on-demand" | "bid", "order", "limit"), an instance created by
// accepting an ask with PUT /asks/{id}/ (image, onstart, env, label, price for a bid), read with
// GET /instances/{id}/ and destroyed with DELETE /instances/{id}/. Failures are `{success: false,
// error, msg}`; an ask that is no longer rentable is answered that way (no_such_ask and its kin).
// Vast retired the v0 instance list (410 deprecated_endpoint, "use /api/v1/instances/"): the list
// reads v1 when v0 says so. Field names below are Vast's.

export interface VastConfig {
  url: string;
  key: string;
  timeoutMs: number;
}

export interface VastOffer {
  id: number;
  gpu_name: string;
  num_gpus: number;
  /** dollars per hour for the whole machine share (all its GPUs), on demand */
  dph_total: number;
  /** the lowest bid accepted, dollars per hour, for interruptible rentals */
  min_bid?: number | null;
  geolocation?: string | null;
  verified?: boolean;
  rentable?: boolean;
}

export interface VastInstance {
  id: number;
  label?: string | null;
  /** loading | running | exited | created | offline … */
  actual_status?: string | null;
  intended_status?: string | null;
  is_bid?: boolean;
}

export interface VastCreate {
  client_id: "me";
  image: string;
  disk: number;
  label: string;
  onstart: string;
  env: Record<string, string>;
  runtype: "ssh";
  /** a bid (interruptible) in dollars per hour for the machine share */
  price?: number;
}

async function call(cfg: VastConfig, what: string, method: "GET" | "PUT" | "DELETE", url: string, body?: unknown) {
  const res = await providerRequest({
    provider: "vast",
    method,
    url,
    headers: { authorization: `Bearer ${cfg.key}` },
    body,
    timeoutMs: cfg.timeoutMs,
    what,
  });
  const b = isRecord(res.body) ? res.body : null;
  if (res.status === 401 || res.status === 403 || b?.error === "auth_error")
    throw new ProviderError("vast", "auth", `${what}: Vast.ai refused the API key (${res.status})`);
  return { status: res.status, body: b, text: res.text };
}

const base = (cfg: VastConfig) => cfg.url.replace(/\/+$/, "");
const CAPACITY_ERRORS = new Set(["no_such_ask", "ask_not_available", "no_capacity", "insufficient_credit_gpu"]);

function failure(what: string, r: { status: number; body: Record<string, unknown> | null; text: string }): ProviderError {
  const error = typeof r.body?.error === "string" ? r.body.error : `http_${r.status}`;
  const msg = typeof r.body?.msg === "string" ? r.body.msg : `answered ${r.status}${snippet(r.text)}`;
  const capacity = CAPACITY_ERRORS.has(error) || /no longer available|not available|already rented|no_such_ask/i.test(msg);
  return new ProviderError("vast", capacity ? "capacity" : "rejected", `${what}: ${msg} (${error})`);
}

/** GET /bundles/?q=…: rentable, verified offers of one kind ("on-demand" or "bid"), cheapest first. */
export async function searchOffers(cfg: VastConfig, type: "on-demand" | "bid", limit = 200): Promise<VastOffer[]> {
  const q = {
    verified: { eq: true },
    rentable: { eq: true },
    rented: { eq: false },
    num_gpus: { gte: 1 },
    type,
    order: [["dph_total", "asc"]],
    limit,
  };
  const r = await call(cfg, "list offers", "GET", `${base(cfg)}/bundles/?q=${encodeURIComponent(JSON.stringify(q))}`);
  if (r.status !== 200 || !r.body) throw failure("list offers", r);
  const offers = Array.isArray(r.body.offers) ? r.body.offers : [];
  return offers.filter(
    (o): o is VastOffer => isRecord(o) && typeof o.id === "number" && typeof o.gpu_name === "string" && typeof o.num_gpus === "number",
  );
}

/** PUT /asks/{id}/: accepts the ask; the new instance's id (new_contract). */
export async function createInstance(cfg: VastConfig, askId: string, input: VastCreate): Promise<string> {
  const r = await call(cfg, "launch", "PUT", `${base(cfg)}/asks/${encodeURIComponent(askId)}/`, input);
  if (r.status === 200 && r.body?.success === true && (typeof r.body.new_contract === "number" || typeof r.body.new_contract === "string"))
    return String(r.body.new_contract);
  throw failure("launch", r);
}

/** GET /instances/{id}/ (answered as {instances: {...}}); null when Vast has no such instance. */
export async function getInstance(cfg: VastConfig, id: string): Promise<VastInstance | null> {
  const r = await call(cfg, "instance status", "GET", `${base(cfg)}/instances/${encodeURIComponent(id)}/`);
  if (r.status === 404) return null;
  if (r.status !== 200 || !r.body) throw failure("instance status", r);
  const i = r.body.instances;
  return isRecord(i) && (typeof i.id === "number" || typeof i.id === "string") ? ({ ...i, id: Number(i.id) } as VastInstance) : null;
}

/** The account's instances: GET /instances/, or v1's when v0 answers 410 deprecated_endpoint. */
export async function listInstances(cfg: VastConfig): Promise<VastInstance[]> {
  let r = await call(cfg, "list instances", "GET", `${base(cfg)}/instances/`);
  if (r.status === 410) r = await call(cfg, "list instances", "GET", `${base(cfg).replace(/\/v0$/, "/v1")}/instances/`);
  if (r.status !== 200 || !r.body) throw failure("list instances", r);
  const list = Array.isArray(r.body.instances) ? r.body.instances : [];
  return list.filter((i): i is VastInstance => isRecord(i) && typeof i.id === "number");
}

/** DELETE /instances/{id}/; an instance Vast no longer has is already destroyed. */
export async function destroyInstance(cfg: VastConfig, id: string): Promise<void> {
  const r = await call(cfg, "terminate", "DELETE", `${base(cfg)}/instances/${encodeURIComponent(id)}/`);
  if (r.status === 200 && r.body?.success !== false) return;
  const said = `${typeof r.body?.error === "string" ? r.body.error : ""} ${typeof r.body?.msg === "string" ? r.body.msg : ""}`;
  if (r.status === 404 || /no_such_instance|not found/i.test(said)) return;
  throw failure("terminate", r);
}
