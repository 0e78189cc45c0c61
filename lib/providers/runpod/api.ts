import { isRecord, providerRequest, snippet } from "../http";
import { ProviderError } from "../types";

// RunPod's GraphQL API (docs.runpod.io, "Manage Pods" and the GraphQL spec), spoken as documented:
// one POST of {query, variables} to the GraphQL endpoint; the key as `Authorization: Bearer` (the
// docs also show an api_key query parameter, which would put the key into URLs and access logs);
// 401/403 for a refused key; otherwise HTTP 200 with `data` and, on failure, `errors: [{message,
// path}]`. A deploy RunPod cannot place answers an error whose message says there are no instances
// with the requested specifications ("There are no longer any instances available with the
// requested specifications. Please refresh and try again."). Field names below are RunPod's.

export interface RunpodConfig {
  url: string;
  key: string;
  timeoutMs: number;
}

export interface RunpodGpuType {
  id: string;
  displayName: string;
  memoryInGb: number | null;
  maxGpuCount: number | null;
  secureCloud: boolean | null;
  securePrice: number | null;
  secureSpotPrice: number | null;
}

export interface RunpodLowestPrice {
  stockStatus: string | null;
  uninterruptablePrice: number | null;
  minimumBidPrice: number | null;
  maxUnreservedGpuCount: number | null;
}

export interface RunpodPod {
  id: string;
  name: string | null;
  desiredStatus: string | null;
  costPerHr: number | null;
  gpuCount: number | null;
  podType: string | null;
  /** null until the container is up */
  runtime: { uptimeInSeconds: number | null } | null;
}

/** podFindAndDeployOnDemand's (and podRentInterruptable's) input, as RunPod names its fields. */
export interface RunpodDeployInput {
  cloudType: "SECURE" | "COMMUNITY" | "ALL";
  gpuCount: number;
  gpuTypeId: string;
  dataCenterId: string;
  name: string;
  imageName: string;
  dockerArgs: string;
  containerDiskInGb: number;
  volumeInGb: number;
  supportPublicIp: boolean;
  startSsh: boolean;
  env: Array<{ key: string; value: string }>;
  /** podRentInterruptable only: the bid per GPU, in dollars per hour */
  bidPerGpu?: number;
}

const CAPACITY = /no longer any instances available|not enough free gpus|no instances? (are )?available|insufficient capacity/i;

async function graphql<T>(cfg: RunpodConfig, what: string, query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await providerRequest({
    provider: "runpod",
    method: "POST",
    url: cfg.url,
    headers: { authorization: `Bearer ${cfg.key}` },
    body: { query, variables },
    timeoutMs: cfg.timeoutMs,
    what,
  });
  if (res.status === 401 || res.status === 403)
    throw new ProviderError("runpod", "auth", `${what}: RunPod refused the API key (${res.status})`);
  const body = isRecord(res.body) ? res.body : null;
  const errors = body && Array.isArray(body.errors) ? body.errors : [];
  if (errors.length) {
    const message = errors
      .map((e) => (isRecord(e) && typeof e.message === "string" ? e.message : "unknown error"))
      .join("; ")
      .slice(0, 300);
    if (CAPACITY.test(message)) throw new ProviderError("runpod", "capacity", `${what}: ${message}`);
    // RunPod's answer to an internal failure ("Something went wrong. Please try again later")
    if (/try again later|internal server error/i.test(message)) throw new ProviderError("runpod", "unavailable", `${what}: ${message}`);
    throw new ProviderError("runpod", "rejected", `${what}: ${message}`);
  }
  if (res.status !== 200 || !body || !isRecord(body.data))
    throw new ProviderError("runpod", "unavailable", `${what}: unexpected answer ${res.status}${snippet(res.text)}`);
  return body.data as T;
}

const GPU_TYPES = `query GpuTypes {
  dataCenters { id name listed }
  gpuTypes { id displayName memoryInGb maxGpuCount secureCloud securePrice secureSpotPrice }
}`;

/** The catalogue: listed data centers and every GPU type with its secure-cloud prices (dollars per GPU-hour). */
export async function gpuTypesAndDataCenters(cfg: RunpodConfig) {
  const data = await graphql<{ dataCenters: unknown; gpuTypes: unknown }>(cfg, "list GPU types", GPU_TYPES, {});
  const dataCenters = (Array.isArray(data.dataCenters) ? data.dataCenters : [])
    .filter((d): d is { id: string; listed?: boolean } => isRecord(d) && typeof d.id === "string")
    .filter((d) => d.listed !== false)
    .map((d) => d.id);
  const gpuTypes = (Array.isArray(data.gpuTypes) ? data.gpuTypes : []).filter(
    (g): g is RunpodGpuType => isRecord(g) && typeof g.id === "string",
  );
  return { dataCenters, gpuTypes };
}

const STOCK = `query GpuStock($lowestPriceInput: GpuLowestPriceInput) {
  gpuTypes { id lowestPrice(input: $lowestPriceInput) { stockStatus uninterruptablePrice minimumBidPrice maxUnreservedGpuCount } }
}`;

/** What each GPU type has in stock in one data center of the secure cloud (gpuTypes.lowestPrice with dataCenterId). */
export async function stockIn(cfg: RunpodConfig, dataCenterId: string): Promise<Map<string, RunpodLowestPrice>> {
  const data = await graphql<{ gpuTypes: unknown }>(cfg, `list stock in ${dataCenterId}`, STOCK, {
    lowestPriceInput: { gpuCount: 1, secureCloud: true, dataCenterId },
  });
  const out = new Map<string, RunpodLowestPrice>();
  for (const g of Array.isArray(data.gpuTypes) ? data.gpuTypes : []) {
    if (!isRecord(g) || typeof g.id !== "string" || !isRecord(g.lowestPrice)) continue;
    out.set(g.id, g.lowestPrice as unknown as RunpodLowestPrice);
  }
  return out;
}

const POD_FIELDS = "id name desiredStatus costPerHr gpuCount podType runtime { uptimeInSeconds }";
const DEPLOY = `mutation Deploy($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) { ${POD_FIELDS} } }`;
const RENT_INTERRUPTABLE = `mutation Rent($input: PodRentInterruptableInput!) { podRentInterruptable(input: $input) { ${POD_FIELDS} } }`;

/** Deploys a pod on demand (podFindAndDeployOnDemand) or as a spot pod (podRentInterruptable with bidPerGpu). */
export async function deployPod(cfg: RunpodConfig, input: RunpodDeployInput): Promise<RunpodPod> {
  const spot = input.bidPerGpu !== undefined;
  const data = await graphql<Record<string, unknown>>(cfg, "launch", spot ? RENT_INTERRUPTABLE : DEPLOY, { input });
  const pod = data[spot ? "podRentInterruptable" : "podFindAndDeployOnDemand"];
  // RunPod answers null (no error) when nothing could be found for the request: no capacity
  if (!isRecord(pod) || typeof pod.id !== "string")
    throw new ProviderError("runpod", "capacity", "launch: RunPod found no machine for the request");
  return pod as unknown as RunpodPod;
}

const POD = `query Pod($input: PodFilter!) { pod(input: $input) { ${POD_FIELDS} } }`;

/** One pod (the `pod` query); null when RunPod has no such pod (terminated pods disappear). */
export async function getPod(cfg: RunpodConfig, podId: string): Promise<RunpodPod | null> {
  const data = await graphql<{ pod: unknown }>(cfg, "instance status", POD, { input: { podId } });
  return isRecord(data.pod) && typeof data.pod.id === "string" ? (data.pod as unknown as RunpodPod) : null;
}

const MY_PODS = `query MyPods { myself { pods { ${POD_FIELDS} } } }`;

export async function myPods(cfg: RunpodConfig): Promise<RunpodPod[]> {
  const data = await graphql<{ myself: unknown }>(cfg, "list instances", MY_PODS, {});
  const pods = isRecord(data.myself) && Array.isArray(data.myself.pods) ? data.myself.pods : [];
  return pods.filter((p): p is RunpodPod => isRecord(p) && typeof p.id === "string");
}

const TERMINATE = `mutation Terminate($input: PodTerminateInput!) { podTerminate(input: $input) }`;

/** podTerminate; a pod RunPod no longer has is reported as an error on that path, which is not one for us. */
export async function terminatePod(cfg: RunpodConfig, podId: string): Promise<void> {
  try {
    await graphql(cfg, "terminate", TERMINATE, { input: { podId } });
  } catch (e) {
    if (e instanceof ProviderError && e.kind === "rejected" && /not found|does not exist|no pod/i.test(e.message)) return;
    throw e;
  }
}
