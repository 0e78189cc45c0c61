// How the inference gateway proves to a node's agent that a request for a workload's port comes
// from it (pure; the agent imports it too). Replicas' serving ports and pods' HTTP ports are not
// published by the container engine at all: the agent listens on the host port itself (its access
// guard, agent/src/access-guard.ts) and forwards a request to the container only when it carries
// the placement's access secret in this header, which only the gateway knows besides the node. The
// header is stripped before the request reaches the container; clients can never set it (the
// gateway drops every x-gpuforge-* header a client sends). SECURITY.md says why a secret rather than
// host firewall rules.

export const WORKLOAD_ACCESS_HEADER = "x-gpuforge-access";
