import { randomInt } from "node:crypto";
import { later, serve, type Booted, type StandInOptions } from "./base";

// A stand-in for Vast.ai's API (docs.vast.ai, API reference): the /api/v0 base with a Bearer key
// (401 {success: false, error: "auth_error"} otherwise). GET /bundles/?q=<json> searches asks
// (filters such as {"rentable": {"eq": true}}, "type": "on-demand" | "bid", "order", "limit");
// PUT /asks/{id}/ rents one ({success: true, new_contract} or {success: false, error:
// "no_such_ask", msg} when it is gone); GET /instances/{id}/ answers {instances: {...}} (null for an
// unknown id); the v0 list answers 410 deprecated_endpoint and v1's is the list; DELETE
// /instances/{id}/ destroys. Instances go loading → running; an outbid one is exited/stopped.

export interface VastAsk {
  id: number;
  gpu_name: string;
  num_gpus: number;
  dph_total: number;
  min_bid: number;
  geolocation: string;
  rented?: boolean;
}

interface Instance {
  id: number;
  label: string;
  actual_status: "loading" | "running" | "exited";
  intended_status: "running" | "stopped";
  is_bid: boolean;
  ask: VastAsk;
  env: Record<string, string>;
  onstart: string;
  destroyed: boolean;
}

export async function startVastStandIn(opts: StandInOptions & { asks?: VastAsk[]; v0ListDeprecated?: boolean } = {}) {
  const key = opts.key ?? `vast${randomInt(1e9, 9e9)}`;
  const asks: VastAsk[] = opts.asks ?? [
    { id: 8001, gpu_name: "RTX 4090", num_gpus: 1, dph_total: 0.41, min_bid: 0.22, geolocation: "Texas, US" },
    { id: 8002, gpu_name: "H100 SXM", num_gpus: 2, dph_total: 5.12, min_bid: 3.1, geolocation: "Sweden, SE" },
    { id: 8003, gpu_name: "H100 SXM", num_gpus: 1, dph_total: 2.3, min_bid: 1.4, geolocation: "Quebec, CA" },
  ];
  const instances = new Map<number, Instance>();
  const fail = (status: number, error: string, msg: string) => ({ status, body: { success: false, error, msg } });
  const view = (i: Instance) => ({
    id: i.id,
    label: i.label,
    actual_status: i.actual_status,
    intended_status: i.intended_status,
    cur_state: i.intended_status,
    is_bid: i.is_bid,
    gpu_name: i.ask.gpu_name,
    num_gpus: i.ask.num_gpus,
    dph_total: i.is_bid ? i.ask.min_bid : i.ask.dph_total,
    machine_id: i.ask.id * 10,
  });
  const listed = () => ({ status: 200, body: { instances: [...instances.values()].filter((i) => !i.destroyed).map(view) } });

  const server = await serve({
    key,
    resolve: (method, url, body) => {
      const p = url.pathname;
      if (method === "GET" && p === "/api/v0/bundles/")
        return {
          operation: "offers",
          handle: () => {
            let q: { type?: string; num_gpus?: { gte?: number }; limit?: number };
            try {
              q = JSON.parse(url.searchParams.get("q") ?? "{}") as typeof q;
            } catch {
              return fail(400, "invalid_args", "q is not JSON");
            }
            const offers = asks
              .filter((a) => !a.rented && a.num_gpus >= (q.num_gpus?.gte ?? 0))
              .sort((a, b) => a.dph_total - b.dph_total)
              .slice(0, q.limit ?? 64)
              .map((a) => ({ ...a, ask_contract_id: a.id, verified: true, rentable: true, reliability2: 0.99, is_bid: q.type === "bid" }));
            return { status: 200, body: { offers } };
          },
        };
      const ask = /^\/api\/v0\/asks\/(\d+)\/$/.exec(p);
      if (method === "PUT" && ask)
        return {
          operation: "launch",
          handle: () => {
            const b = (body ?? {}) as Record<string, unknown>;
            if (b.client_id !== "me" || typeof b.image !== "string")
              return fail(400, "invalid_args", 'client_id "me" and image are required');
            const a = asks.find((x) => x.id === Number(ask[1]));
            if (!a || a.rented) return fail(404, "no_such_ask", `Instance type by id ${ask[1]} is not available.`);
            const bid = typeof b.price === "number";
            if (bid && Number(b.price) < a.min_bid)
              return fail(400, "invalid_args", `bid price ${String(b.price)} is below the minimum ${a.min_bid}`);
            a.rented = true;
            const i: Instance = {
              id: randomInt(1_000_000, 9_999_999),
              label: typeof b.label === "string" ? b.label : "",
              actual_status: "loading",
              intended_status: "running",
              is_bid: bid,
              ask: a,
              env: (b.env ?? {}) as Record<string, string>,
              onstart: typeof b.onstart === "string" ? b.onstart : "",
              destroyed: false,
            };
            instances.set(i.id, i);
            later(opts.bootMs ?? 0, () => {
              if (i.destroyed || i.intended_status !== "running") return;
              i.actual_status = "running";
              const booted: Booted = {
                id: String(i.id),
                name: i.label,
                gpuCount: a.num_gpus,
                providerGpuType: a.gpu_name,
                env: i.env,
                startScript: i.onstart,
              };
              void opts.onBoot?.(booted);
            });
            return { status: 200, body: { success: true, new_contract: i.id } };
          },
        };
      if (method === "GET" && p === "/api/v0/instances/")
        return {
          operation: "list",
          handle: () => (opts.v0ListDeprecated === false ? listed() : fail(410, "deprecated_endpoint", "Use /api/v1/instances/ instead")),
        };
      if (method === "GET" && p === "/api/v1/instances/") return { operation: "list", handle: listed };
      const one = /^\/api\/v0\/instances\/(\d+)\/$/.exec(p);
      if (one && method === "GET")
        return {
          operation: "status",
          handle: () => {
            const i = instances.get(Number(one[1]));
            return { status: 200, body: { instances: i && !i.destroyed ? view(i) : null } };
          },
        };
      if (one && method === "DELETE")
        return {
          operation: "terminate",
          handle: () => {
            const i = instances.get(Number(one[1]));
            if (!i || i.destroyed) return fail(404, "no_such_instance", "Instance not found");
            i.destroyed = true;
            i.ask.rented = false;
            return { status: 200, body: { success: true } };
          },
        };
      return null;
    },
    unauthorized: () => fail(401, "auth_error", "Invalid user key"),
    capacity: () => fail(404, "no_such_ask", "Instance type is no longer available."),
    notFound: () => fail(404, "not_found", "Not found"),
  });
  return {
    ...server,
    url: `${server.origin}/api/v0`,
    key,
    instances,
    asks,
    /** the host takes the instance back (a bid outbid): exited, stopped */
    interrupt(id: string) {
      const i = instances.get(Number(id));
      if (i) {
        i.actual_status = "exited";
        i.intended_status = "stopped";
      }
    },
    live: () => [...instances.values()].filter((i) => !i.destroyed),
  };
}
