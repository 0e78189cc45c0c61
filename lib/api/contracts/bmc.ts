import { bmcJsonSchema, powerBody, powerReplySchema, putBmcBody } from "@/lib/bmc/schemas";
import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { provisionBody, provisioningJsonSchema } from "@/lib/provisioning/schemas";
import { errorBodySchema } from "@/lib/http/error-response";
import { authErrors, idParams, notFoundError } from "./common";

// BMCs and power (API.md, "BMC and provisioning"): operators only. A tenant, an agent or anyone else
// is refused by the route wrapper before anything is read.

const provisioningReply = z.object({ provisioning: provisioningJsonSchema });

const bmcFailures = {
  502: {
    description:
      "The BMC failed (bad_gateway): unreachable, its certificate not trusted, the credentials refused, or an answer that is not Redfish; details name the BMC field concerned",
    schema: errorBodySchema,
  },
  504: { description: "The BMC stayed busy or did not answer in time (gateway_timeout)", schema: errorBodySchema },
} as const;

export const putNodeBmc = defineContract({
  operationId: "putNodeBmc",
  method: "PUT",
  path: "/api/nodes/{id}/bmc",
  summary: "Store the node's BMC: its Redfish address and login (the password is encrypted at rest and never returned)",
  description:
    "Replaces what was stored. The URL is the BMC's origin (or its /redfish/v1 root): every resource is discovered from the service root. http:// needs verify_tls: false, said explicitly; ca_pem pins the CA an https BMC's certificate must chain to. Loopback and link-local addresses are refused unless the deployment's BMC_NETWORKS lists them, and with BMC_NETWORKS set only addresses inside it are taken. 503 when the deployment has no SETTINGS_ENCRYPTION_KEY to seal the password with.",
  tags: ["BMC and provisioning"],
  access: ["operator"],
  params: idParams,
  body: putBmcBody,
  bodyLimitBytes: 96 * 1024,
  rateLimitPerMinute: 120,
  responses: {
    200: { description: "Stored (without the password)", schema: bmcJsonSchema },
    ...authErrors,
    ...notFoundError,
    503: { description: "No SETTINGS_ENCRYPTION_KEY to encrypt the password with (unavailable)", schema: errorBodySchema },
  },
});

export const getNodeBmc = defineContract({
  operationId: "getNodeBmc",
  method: "GET",
  path: "/api/nodes/{id}/bmc",
  summary: "The node's BMC: address, login name, TLS checking, last contact and what it found (never the password)",
  tags: ["BMC and provisioning"],
  access: ["operator"],
  params: idParams,
  responses: { 200: { description: "The BMC", schema: bmcJsonSchema }, ...authErrors, ...notFoundError },
});

export const deleteNodeBmc = defineContract({
  operationId: "deleteNodeBmc",
  method: "DELETE",
  path: "/api/nodes/{id}/bmc",
  summary: "Forget the node's BMC and its password",
  tags: ["BMC and provisioning"],
  access: ["operator"],
  params: idParams,
  responses: { 204: { description: "Forgotten" }, ...authErrors, ...notFoundError },
});

export const powerNode = defineContract({
  operationId: "powerNode",
  method: "POST",
  path: "/api/nodes/{id}/power",
  summary: "Power the node on, off or restart it through its BMC (ComputerSystem.Reset)",
  description:
    "Sends the first ResetType the BMC lists for the action (on: On, ForceOn, PushPowerButton; off: ForceOff, GracefulShutdown, PushPowerButton; restart: ForceRestart, GracefulRestart, PowerCycle), nothing when the system is already in that state. 202 once the BMC accepted it: the power state follows on the BMC's time. 409 when the node has no BMC, its password cannot be opened, or a provisioning holds the node.",
  tags: ["BMC and provisioning"],
  access: ["operator"],
  params: idParams,
  body: powerBody,
  rateLimitPerMinute: 120,
  responses: {
    202: { description: "The BMC accepted the reset", schema: powerReplySchema },
    ...authErrors,
    ...notFoundError,
    409: { description: "No BMC, an unreadable password, or a provisioning holds the node (conflict)", schema: errorBodySchema },
    ...bmcFailures,
  },
});

export const provisionNode = defineContract({
  operationId: "provisionNode",
  method: "POST",
  path: "/api/nodes/{id}/provision",
  summary: "Provision the node from an image through its BMC: power off, eject, insert, one-time CD boot, power on, wait for the agent",
  description:
    "The node must be out of service (maintenance or quarantined) or never used (registered); it moves to provisioning at once and the steps run in the background under the node's lease. Everything is discovered from the BMC's service root. When the node's agent is heard from after the power-on the node moves on to inspection (attestation) on the same workflow (phase inspection), which ends once the node passes; a failure quarantines it and raises a critical alert. Stop one by putting the node in maintenance (PATCH /api/nodes/{id}). 409 when the node has no usable BMC, cannot be provisioned from its state, or runs another workflow.",
  tags: ["BMC and provisioning"],
  access: ["operator"],
  params: idParams,
  body: provisionBody,
  rateLimitPerMinute: 120,
  responses: {
    202: { description: "Started; the steps follow", schema: provisioningReply },
    ...authErrors,
    ...notFoundError,
    409: {
      description:
        "No usable BMC (conflict), a state that cannot be provisioned (invalid_transition), or another workflow running (conflict)",
      schema: errorBodySchema,
    },
  },
});

export const getNodeProvisioning = defineContract({
  operationId: "getNodeProvisioning",
  method: "GET",
  path: "/api/nodes/{id}/provisioning",
  summary: "The node's latest provisioning: its steps with each Redfish request, answer and timing",
  tags: ["BMC and provisioning"],
  access: ["operator"],
  params: idParams,
  responses: {
    200: { description: "The latest provisioning", schema: provisioningReply },
    ...authErrors,
    404: { description: "No such node, or it was never provisioned", schema: errorBodySchema },
  },
});
