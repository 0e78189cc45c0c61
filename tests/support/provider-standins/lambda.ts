import { randomBytes } from "node:crypto";
import { later, serve, type Booted, type StandInOptions } from "./base";

// A stand-in for Lambda Cloud's REST API v1 (docs.lambda.ai, Cloud API reference): under /api/v1,
// Bearer key (401 global/invalid-api-key otherwise), answers wrapped in `data`, errors as
// `{error: {code, message, suggestion}}`. GET /instance-types lists types with price_cents_per_hour
// and regions_with_capacity_available; POST /instance-operations/launch requires region_name,
// instance_type_name and exactly one of ssh_key_names (global/invalid-parameters otherwise) and
// answers instance-operations/launch/insufficient-capacity when the region has none; instances go
// booting → active; GET /instances/{id} of an unknown one is 404 global/object-does-not-exist.

export interface LambdaType {
  name: string;
  gpu_description: string;
  price_cents_per_hour: number;
  gpus: number;
  /** free instances per region */
  capacity: Record<string, number>;
}

interface Instance {
  id: string;
  name: string;
  status: "booting" | "active" | "terminated";
  type: LambdaType;
  region: string;
  env: Record<string, string>;
  user_data: string;
}

const error = (status: number, code: string, message: string) => ({ status, body: { error: { code, message, suggestion: null } } });

/** The variables a `#!/bin/sh` user-data script exports before anything else runs (export NAME='value' lines). */
function exportedVariables(script: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of script.matchAll(/^export ([A-Z_][A-Z0-9_]*)='((?:[^']|'"'"')*)'$/gm)) out[m[1]!] = m[2]!.replace(/'"'"'/g, "'");
  return out;
}

export async function startLambdaStandIn(opts: StandInOptions & { types?: LambdaType[]; sshKeys?: string[] } = {}) {
  const key = opts.key ?? `secret_${randomBytes(12).toString("hex")}`;
  const sshKeys = opts.sshKeys ?? ["gpuforge"];
  const types: LambdaType[] = opts.types ?? [
    {
      name: "gpu_1x_h100_pcie",
      gpu_description: "H100 (80 GB PCIe)",
      price_cents_per_hour: 249,
      gpus: 1,
      capacity: { "us-east-1": 2, "us-west-1": 1 },
    },
    {
      name: "gpu_8x_a100_80gb_sxm4",
      gpu_description: "A100 (80 GB SXM4)",
      price_cents_per_hour: 1432,
      gpus: 8,
      capacity: { "us-east-1": 1 },
    },
  ];
  const instances = new Map<string, Instance>();
  const view = (i: Instance) => ({
    id: i.id,
    name: i.name,
    status: i.status,
    ip: i.status === "active" ? "192.0.2.10" : null,
    region: { name: i.region, description: i.region },
    instance_type: { name: i.type.name, description: i.type.gpu_description, price_cents_per_hour: i.type.price_cents_per_hour },
    ssh_key_names: sshKeys.slice(0, 1),
    file_system_names: [],
  });

  const server = await serve({
    key,
    resolve: (method, url, body) => {
      const p = url.pathname.replace(/^\/api\/v1/, "");
      if (method === "GET" && p === "/instance-types")
        return {
          operation: "offers",
          handle: () => ({
            status: 200,
            body: {
              data: Object.fromEntries(
                types.map((t) => [
                  t.name,
                  {
                    instance_type: {
                      name: t.name,
                      description: `${t.gpus}x ${t.gpu_description}`,
                      gpu_description: t.gpu_description,
                      price_cents_per_hour: t.price_cents_per_hour,
                      specs: { gpus: t.gpus, vcpus: 26 * t.gpus, memory_gib: 200 * t.gpus, storage_gib: 1000 },
                    },
                    regions_with_capacity_available: Object.entries(t.capacity)
                      .filter(([, n]) => n > 0)
                      .map(([name]) => ({ name, description: name })),
                  },
                ]),
              ),
            },
          }),
        };
      if (method === "POST" && p === "/instance-operations/launch")
        return {
          operation: "launch",
          handle: () => {
            const b = (body ?? {}) as Record<string, unknown>;
            const names = b.ssh_key_names;
            if (typeof b.region_name !== "string" || typeof b.instance_type_name !== "string" || !Array.isArray(names))
              return error(400, "global/invalid-parameters", "region_name, instance_type_name and ssh_key_names are required");
            if (names.length !== 1 || !sshKeys.includes(String(names[0])))
              return error(400, "global/invalid-parameters", "Exactly one SSH key name registered to the account must be given");
            const t = types.find((x) => x.name === b.instance_type_name);
            if (!t) return error(400, "global/invalid-parameters", `Unknown instance type ${String(b.instance_type_name)}`);
            if ((t.capacity[b.region_name] ?? 0) < 1)
              return error(400, "instance-operations/launch/insufficient-capacity", "Not enough capacity to fulfill launch request.");
            t.capacity[b.region_name]! -= 1;
            const userData = typeof b.user_data === "string" ? b.user_data : "";
            const i: Instance = {
              id: randomBytes(16).toString("hex"),
              name: typeof b.name === "string" ? b.name : "",
              status: "booting",
              type: t,
              region: b.region_name,
              env: exportedVariables(userData),
              user_data: userData,
            };
            instances.set(i.id, i);
            later(opts.bootMs ?? 0, () => {
              if (i.status !== "booting") return;
              i.status = "active";
              const booted: Booted = {
                id: i.id,
                name: i.name,
                gpuCount: t.gpus,
                providerGpuType: t.gpu_description,
                env: i.env,
                startScript: userData,
              };
              void opts.onBoot?.(booted);
            });
            return { status: 200, body: { data: { instance_ids: [i.id] } } };
          },
        };
      if (method === "POST" && p === "/instance-operations/terminate")
        return {
          operation: "terminate",
          handle: () => {
            const ids = ((body ?? {}) as { instance_ids?: unknown }).instance_ids;
            if (!Array.isArray(ids) || ids.length === 0) return error(400, "global/invalid-parameters", "instance_ids is required");
            const found = ids.map((id) => instances.get(String(id))).filter((i) => i && i.status !== "terminated") as Instance[];
            if (found.length !== ids.length) return error(404, "global/object-does-not-exist", "Specified instance does not exist.");
            for (const i of found) {
              i.status = "terminated";
              i.type.capacity[i.region] = (i.type.capacity[i.region] ?? 0) + 1;
            }
            return { status: 200, body: { data: { terminated_instances: found.map(view) } } };
          },
        };
      if (method === "GET" && p === "/instances")
        return {
          operation: "list",
          handle: () => ({ status: 200, body: { data: [...instances.values()].filter((i) => i.status !== "terminated").map(view) } }),
        };
      const m = /^\/instances\/([^/]+)$/.exec(p);
      if (method === "GET" && m)
        return {
          operation: "status",
          handle: () => {
            const i = instances.get(decodeURIComponent(m[1]!));
            return i && i.status !== "terminated"
              ? { status: 200, body: { data: view(i) } }
              : error(404, "global/object-does-not-exist", "Specified instance does not exist.");
          },
        };
      return null;
    },
    unauthorized: () => error(401, "global/invalid-api-key", "API key was invalid, expired, or deleted."),
    capacity: () => error(400, "instance-operations/launch/insufficient-capacity", "Not enough capacity to fulfill launch request."),
    notFound: () => error(404, "global/object-does-not-exist", "Not found."),
  });
  return {
    ...server,
    url: `${server.origin}/api/v1`,
    key,
    instances,
    types,
    /** Lambda ends the instance itself (a host failure) */
    interrupt(id: string) {
      const i = instances.get(id);
      if (i) i.status = "terminated";
    },
    live: () => [...instances.values()].filter((i) => i.status !== "terminated"),
  };
}
