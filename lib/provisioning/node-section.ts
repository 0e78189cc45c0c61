import "server-only";
import type { OperatorPrincipal } from "@/lib/auth/principal";
import { findBmc } from "@/lib/bmc/queries";
import type { BmcJson } from "@/lib/bmc/schemas";
import { pool } from "@/lib/db/client";
import { nodeState, transition } from "@/lib/fleet/node-lifecycle";
import { runningWorkflowOf } from "@/lib/fleet/node-workflows";
import { settingsKey } from "@/lib/settings/settings";
import { nodeProvisionings } from "./queries";
import type { ProvisioningJson } from "./schemas";

/** What the node page's "BMC and provisioning" section shows, and what it lets the operator do now and why not. */
export interface NodeProvisioningSection {
  bmc: BmcJson | null;
  provisionings: ProvisioningJson[];
  /** the deployment can seal BMC passwords (SETTINGS_ENCRYPTION_KEY is set) */
  encryption: boolean;
  /** why the power buttons are off, or null when they are on */
  powerBlocked: string | null;
  /** why provisioning cannot start now, or null when it can */
  provisionBlocked: string | null;
}

export async function nodeProvisioningSection(
  p: OperatorPrincipal,
  node: { id: string; status: string; statusBeforeOffline: string | null },
): Promise<NodeProvisioningSection> {
  const [bmc, provisionings, running] = await Promise.all([
    findBmc(p, node.id),
    nodeProvisionings(p, node.id, 5),
    runningWorkflowOf(pool(), node.id),
  ]);
  const usable = !bmc
    ? "Store the node's BMC first"
    : !bmc.password_readable
      ? "The stored BMC password cannot be opened here: store the BMC again"
      : null;
  const busy = running ? `A ${running.kind} is running on this node; stop it with maintenance first` : null;
  const allowed = transition(nodeState({ status: node.status, status_before_offline: node.statusBeforeOffline }), { kind: "provision" });
  return {
    bmc,
    provisionings,
    encryption: settingsKey() !== null,
    powerBlocked: usable ?? busy,
    provisionBlocked:
      usable ??
      busy ??
      (allowed.ok
        ? null
        : `This node is ${node.status === "offline" ? `offline (returning ${node.statusBeforeOffline ?? "available"})` : node.status}: provisioning starts from maintenance or quarantine, or before a node ever took work. Take it out of service first.`),
  };
}
