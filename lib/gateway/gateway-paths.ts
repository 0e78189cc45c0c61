// What the gateway serves, pure: `/v1/endpoints/{endpoint_id}/{path}` (an endpoint's replicas) and
// `/v1/pods/{pod_id}/ports/{port}/{path}` (a running pod's HTTP port). The rest of the path and the
// query go to the workload as they came.

export type GatewayPath = { kind: "endpoint"; id: string; rest: string } | { kind: "pod"; id: string; port: number; rest: string };

const ENDPOINT = /^\/v1\/endpoints\/([^/?#]+)(\/[^?#]*)?$/;
const POD = /^\/v1\/pods\/([^/?#]+)\/ports\/(\d{1,5})(\/[^?#]*)?$/;

/** The gateway path of a URL's pathname, or null when it names nothing the gateway serves. */
export function parseGatewayPath(pathname: string): GatewayPath | null {
  const e = ENDPOINT.exec(pathname);
  if (e) return { kind: "endpoint", id: e[1]!, rest: e[2] ?? "/" };
  const p = POD.exec(pathname);
  if (p) {
    const port = Number(p[2]);
    if (port < 1 || port > 65_535) return null;
    return { kind: "pod", id: p[1]!, port, rest: p[3] ?? "/" };
  }
  return null;
}

export const GATEWAY_SERVES = "The gateway serves /v1/endpoints/{endpoint_id}/{path} and /v1/pods/{pod_id}/ports/{port}/{path}";
