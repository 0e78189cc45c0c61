import { ProviderError, type InstanceReport, type LaunchSpec, type ProviderAdapter, type ProviderOffer } from "../types";
import {
  getInstance,
  instanceTypes,
  launchInstance,
  listInstances,
  terminateInstance,
  type LambdaConfig,
  type LambdaInstance,
} from "./api";

// Lambda Cloud in GPUForge's terms. An offer is an instance type in a region that has capacity for
// it now (regions_with_capacity_available); Lambda prices the whole instance (price_cents_per_hour)
// and we store it per GPU, rounded up. Lambda instances are virtual machines with Docker and the
// NVIDIA container toolkit (Lambda Stack), so their nodes run containers. Lambda has no environment
// variables for an instance: the start script travels as cloud-init user_data with the agent's
// variables set at its top. Lambda sells no interruptible capacity.

const SEP = "@";

export function lambdaAdapter(cfg: LambdaConfig & { sshKeyName: string | undefined }): ProviderAdapter {
  return {
    name: "lambda",

    async listOffers() {
      const offers: ProviderOffer[] = [];
      for (const t of await instanceTypes(cfg)) {
        const gpus = t.instance_type.specs?.gpus ?? 0;
        if (gpus < 1 || !(t.instance_type.price_cents_per_hour > 0)) continue;
        for (const region of t.regions_with_capacity_available ?? []) {
          offers.push({
            offerId: `${t.instance_type.name}${SEP}${region.name}`,
            providerGpuType: t.instance_type.gpu_description || t.instance_type.name,
            gpuCount: gpus,
            region: region.name,
            interruptible: false,
            costCentsPerGpuHour: Math.ceil(t.instance_type.price_cents_per_hour / gpus),
          });
        }
      }
      return offers;
    },

    async launch(spec: LaunchSpec) {
      const [type, region] = spec.offer.offerId.split(SEP);
      if (!type || !region) throw new ProviderError("lambda", "rejected", `not a Lambda offer id: ${spec.offer.offerId}`);
      if (!cfg.sshKeyName)
        throw new ProviderError("lambda", "rejected", "launch: LAMBDA_SSH_KEY_NAME is not set (Lambda requires one SSH key per launch)");
      const externalId = await launchInstance(cfg, {
        region_name: region,
        instance_type_name: type,
        ssh_key_names: [cfg.sshKeyName],
        quantity: 1,
        name: spec.name,
        user_data: userData(spec),
      });
      return { externalId };
    },

    async status(externalId: string) {
      const i = await getInstance(cfg, externalId);
      return i ? report(i) : { externalId, name: null, state: "gone", providerStatus: "not found" };
    },

    async terminate(externalId: string) {
      await terminateInstance(cfg, externalId);
    },

    async listInstances() {
      return (await listInstances(cfg)).map(report);
    },
  };
}

/** The start script with the agent's variables exported first (shell-quoted), as cloud-init runs it at first boot. */
function userData(spec: LaunchSpec): string {
  const exports = Object.entries(spec.env)
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, `'"'"'`)}'`)
    .join("\n");
  return spec.startScript.replace(/^(#![^\n]*\n)?/, (shebang) => `${shebang || "#!/bin/sh\n"}${exports}\n`);
}

function report(i: LambdaInstance): InstanceReport {
  const state: InstanceReport["state"] =
    i.status === "active" || i.status === "unhealthy"
      ? "running"
      : i.status === "terminated" || i.status === "terminating"
        ? "gone"
        : "booting";
  return { externalId: i.id, name: i.name ?? null, state, providerStatus: i.status };
}
