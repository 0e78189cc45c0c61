import { randomBytes } from "node:crypto";
import { later, serve, type Booted, type Route, type StandInOptions } from "./base";

// A stand-in for RunPod's GraphQL API (docs.runpod.io "Manage Pods" and the GraphQL spec): POST
// {query, variables} to /graphql with a Bearer key (401 otherwise); answers HTTP 200 with `data`, or
// `errors: [{message, path}]` — the capacity failure in RunPod's words ("There are no longer any
// instances available with the requested specifications. Please refresh and try again."). It
// serves the operations by their root fields: dataCenters and gpuTypes (with lowestPrice per data
// center), podFindAndDeployOnDemand, podRentInterruptable, pod, myself.pods and podTerminate, with
// their inputs given as variables. A deployed pod has desiredStatus RUNNING and no runtime until it
// "boots"; a terminated pod is gone (pod answers null); an interrupted spot pod is EXITED.

export interface RunpodGpu {
  id: string;
  displayName: string;
  memoryInGb: number;
  maxGpuCount: number;
  securePrice: number;
  secureSpotPrice: number | null;
}

interface Pod {
  id: string;
  name: string;
  desiredStatus: "RUNNING" | "EXITED" | "TERMINATED";
  costPerHr: number;
  gpuCount: number;
  gpuTypeId: string;
  dataCenterId: string;
  podType: "RESERVED" | "INTERRUPTABLE";
  runtime: { uptimeInSeconds: number } | null;
  env: Record<string, string>;
  dockerArgs: string;
}

const NO_CAPACITY = "There are no longer any instances available with the requested specifications. Please refresh and try again.";

export async function startRunpodStandIn(
  opts: StandInOptions & { gpus?: RunpodGpu[]; dataCenters?: string[]; stock?: Record<string, Record<string, number>> } = {},
) {
  const key = opts.key ?? `rp_${randomBytes(12).toString("hex")}`;
  const gpus: RunpodGpu[] = opts.gpus ?? [
    { id: "NVIDIA H100 80GB HBM3", displayName: "H100 SXM", memoryInGb: 80, maxGpuCount: 8, securePrice: 2.99, secureSpotPrice: 1.75 },
    { id: "NVIDIA A100 80GB PCIe", displayName: "A100 PCIe", memoryInGb: 80, maxGpuCount: 8, securePrice: 1.64, secureSpotPrice: null },
  ];
  const dataCenters = opts.dataCenters ?? ["US-KS-2", "EU-RO-1"];
  // free GPUs per data center and GPU type
  const stock: Record<string, Record<string, number>> = opts.stock ??
  Object.fromEntries(dataCenters.map((dc) => [dc, Object.fromEntries(gpus.map((g) => [g.id, 8]))]));
  const pods = new Map<string, Pod>();
  const err = (message: string, path: string) => ({ status: 200, body: { data: null, errors: [{ message, path: [path] }] } });
  const ok = (data: unknown) => ({ status: 200, body: { data } });
  const view = (p: Pod) => ({
    id: p.id,
    name: p.name,
    desiredStatus: p.desiredStatus,
    costPerHr: p.costPerHr,
    gpuCount: p.gpuCount,
    podType: p.podType,
    runtime: p.runtime,
  });

  const deploy = (root: "podFindAndDeployOnDemand" | "podRentInterruptable") => (body: unknown) => {
    const input = (body as { variables?: { input?: Record<string, unknown> } }).variables?.input;
    if (!input || typeof input.gpuTypeId !== "string" || typeof input.imageName !== "string" || !Number.isInteger(input.gpuCount))
      return {
        status: 400,
        body: {
          errors: [
            {
              message: 'Variable "$input" got invalid value: gpuTypeId, imageName and gpuCount are required',
              extensions: { code: "BAD_USER_INPUT" },
            },
          ],
        },
      };
    if (!["SECURE", "COMMUNITY", "ALL"].includes(String(input.cloudType)))
      return { status: 400, body: { errors: [{ message: `Value "${String(input.cloudType)}" does not exist in "CloudTypeEnum" enum.` }] } };
    const gpu = gpus.find((g) => g.id === input.gpuTypeId);
    const dc = typeof input.dataCenterId === "string" ? input.dataCenterId : dataCenters[0]!;
    const free = stock[dc]?.[String(input.gpuTypeId)] ?? 0;
    const count = Number(input.gpuCount);
    if (!gpu || free < count) return err(NO_CAPACITY, root);
    if (
      root === "podRentInterruptable" &&
      !(typeof input.bidPerGpu === "number" && gpu.secureSpotPrice && input.bidPerGpu >= gpu.secureSpotPrice)
    )
      return err("Your bid price is below the minimum bid for this GPU type.", root);
    stock[dc]![gpu.id] = free - count;
    const env = Object.fromEntries(
      (Array.isArray(input.env) ? input.env : []).map((e: { key: string; value: string }) => [e.key, e.value]),
    ) as Record<string, string>;
    const pod: Pod = {
      id: randomBytes(7).toString("hex").slice(0, 14),
      name: typeof input.name === "string" ? input.name : "",
      desiredStatus: "RUNNING",
      costPerHr: (root === "podRentInterruptable" ? Number(input.bidPerGpu) : gpu.securePrice) * count,
      gpuCount: count,
      gpuTypeId: gpu.id,
      dataCenterId: dc,
      podType: root === "podRentInterruptable" ? "INTERRUPTABLE" : "RESERVED",
      runtime: null,
      env,
      dockerArgs: typeof input.dockerArgs === "string" ? input.dockerArgs : "",
    };
    pods.set(pod.id, pod);
    later(opts.bootMs ?? 0, () => {
      if (pod.desiredStatus !== "RUNNING") return;
      pod.runtime = { uptimeInSeconds: 1 };
      const booted: Booted = { id: pod.id, name: pod.name, gpuCount: count, providerGpuType: gpu.id, env, startScript: pod.dockerArgs };
      void opts.onBoot?.(booted);
    });
    return ok({ [root]: view(pod) });
  };

  const routes: Array<[RegExp, Route]> = [
    [/\bpodFindAndDeployOnDemand\s*\(/, { operation: "launch", handle: deploy("podFindAndDeployOnDemand") }],
    [/\bpodRentInterruptable\s*\(/, { operation: "launch", handle: deploy("podRentInterruptable") }],
    [
      /\bpodTerminate\s*\(/,
      {
        operation: "terminate",
        handle: (body) => {
          const id = (body as { variables?: { input?: { podId?: string } } }).variables?.input?.podId ?? "";
          const pod = pods.get(id);
          if (!pod || pod.desiredStatus === "TERMINATED") return err("pod not found", "podTerminate");
          pod.desiredStatus = "TERMINATED";
          pod.runtime = null;
          stock[pod.dataCenterId]![pod.gpuTypeId] = (stock[pod.dataCenterId]![pod.gpuTypeId] ?? 0) + pod.gpuCount;
          return ok({ podTerminate: null });
        },
      },
    ],
    [
      /\bpod\s*\(\s*input/,
      {
        operation: "status",
        handle: (body) => {
          const id = (body as { variables?: { input?: { podId?: string } } }).variables?.input?.podId ?? "";
          const pod = pods.get(id);
          return ok({ pod: pod && pod.desiredStatus !== "TERMINATED" ? view(pod) : null });
        },
      },
    ],
    [
      /\bmyself\s*\{\s*pods/,
      {
        operation: "list",
        handle: () => ok({ myself: { pods: [...pods.values()].filter((p) => p.desiredStatus !== "TERMINATED").map(view) } }),
      },
    ],
    [
      /\blowestPrice\s*\(/,
      {
        operation: "stock",
        handle: (body) => {
          const input =
            (body as { variables?: { lowestPriceInput?: { dataCenterId?: string; gpuCount?: number } } }).variables?.lowestPriceInput ?? {};
          const dc = input.dataCenterId;
          return ok({
            gpuTypes: gpus.map((g) => {
              const free = dc ? (stock[dc]?.[g.id] ?? 0) : Math.max(0, ...dataCenters.map((d) => stock[d]?.[g.id] ?? 0));
              const enough = free >= (input.gpuCount ?? 1);
              return {
                id: g.id,
                lowestPrice: {
                  stockStatus: enough ? (free >= 4 ? "High" : "Low") : null,
                  uninterruptablePrice: enough ? g.securePrice : null,
                  minimumBidPrice: enough ? g.secureSpotPrice : null,
                  maxUnreservedGpuCount: free,
                },
              };
            }),
          });
        },
      },
    ],
    [
      /\bdataCenters\b/,
      {
        operation: "catalog",
        handle: () =>
          ok({
            dataCenters: dataCenters.map((id) => ({ id, name: id, listed: true })),
            gpuTypes: gpus.map((g) => ({ ...g, secureCloud: true })),
          }),
      },
    ],
  ];

  const server = await serve({
    key,
    resolve: (method, url, body) => {
      if (method !== "POST" || url.pathname !== "/graphql") return null;
      const query = (body as { query?: unknown } | undefined)?.query;
      if (typeof query !== "string") return null;
      return routes.find(([re]) => re.test(query))?.[1] ?? null;
    },
    unauthorized: () => ({ status: 401, body: { errors: [{ message: "Unauthorized" }] } }),
    capacity: (op) => err(NO_CAPACITY, op === "launch" ? "podFindAndDeployOnDemand" : op),
    notFound: () => ({ status: 400, body: { errors: [{ message: "Must provide a query string." }] } }),
  });

  return {
    ...server,
    url: `${server.origin}/graphql`,
    key,
    pods,
    stock,
    /** RunPod takes the pod back (a spot pod outbid): EXITED, no runtime */
    interrupt(id: string) {
      const pod = pods.get(id);
      if (pod) {
        pod.desiredStatus = "EXITED";
        pod.runtime = null;
      }
    },
    live: () => [...pods.values()].filter((p) => p.desiredStatus !== "TERMINATED"),
  };
}
