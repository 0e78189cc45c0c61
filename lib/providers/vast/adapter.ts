import { dollarsToCentsUp } from "../http";
import { ProviderError, type InstanceReport, type LaunchSpec, type ProviderAdapter, type ProviderOffer } from "../types";
import {
  createInstance,
  destroyInstance,
  getInstance,
  listInstances,
  searchOffers,
  type VastConfig,
  type VastInstance,
  type VastOffer,
} from "./api";

// Vast.ai in GPUForge's terms. An offer is an ask (a machine share), on demand at dph_total or as
// an interruptible bid at min_bid, both dollars per hour for all its GPUs, stored per GPU and
// rounded up; its region is the country in its geolocation ("Texas, US" → US). The instance is a
// container of the configured image: the start script is its onstart, the agent's variables its env.

const BID = ":bid";

export function vastAdapter(cfg: VastConfig & { image: string }): ProviderAdapter {
  return {
    name: "vast",

    async listOffers() {
      const out: ProviderOffer[] = [];
      const toOffer = (o: VastOffer, bid: boolean): ProviderOffer | null => {
        const dollars = bid ? o.min_bid : o.dph_total;
        if (!dollars || dollars <= 0 || o.num_gpus < 1) return null;
        return {
          offerId: `${o.id}${bid ? BID : ""}`,
          providerGpuType: o.gpu_name,
          gpuCount: o.num_gpus,
          region: regionOf(o.geolocation),
          interruptible: bid,
          costCentsPerGpuHour: dollarsToCentsUp(dollars / o.num_gpus),
        };
      };
      for (const o of await searchOffers(cfg, "on-demand")) {
        const offer = toOffer(o, false);
        if (offer) out.push(offer);
      }
      for (const o of await searchOffers(cfg, "bid")) {
        const offer = toOffer(o, true);
        if (offer) out.push(offer);
      }
      return out;
    },

    async launch(spec: LaunchSpec) {
      const bid = spec.offer.offerId.endsWith(BID);
      const askId = bid ? spec.offer.offerId.slice(0, -BID.length) : spec.offer.offerId;
      if (!/^\d+$/.test(askId)) throw new ProviderError("vast", "rejected", `not a Vast.ai offer id: ${spec.offer.offerId}`);
      const externalId = await createInstance(cfg, askId, {
        client_id: "me",
        image: cfg.image,
        disk: 40,
        label: spec.name,
        onstart: spec.startScript,
        env: spec.env,
        runtype: "ssh",
        // a bid for the whole share: the per-GPU cost the offer said, times its GPUs
        ...(bid ? { price: (spec.offer.costCentsPerGpuHour * spec.offer.gpuCount) / 100 } : {}),
      });
      return { externalId };
    },

    async status(externalId: string) {
      const i = await getInstance(cfg, externalId);
      return i ? report(i) : { externalId, name: null, state: "gone", providerStatus: "not found" };
    },

    async terminate(externalId: string) {
      await destroyInstance(cfg, externalId);
    },

    async listInstances() {
      return (await listInstances(cfg)).map(report);
    },
  };
}

function regionOf(geolocation: string | null | undefined): string {
  const parts = (geolocation ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  return parts.at(-1) ?? "unknown";
}

/** running is up; loading/created still starting; an instance stopped while we meant it to run (a bid outbid) is interrupted. */
function report(i: VastInstance): InstanceReport {
  const actual = i.actual_status ?? "unknown";
  const state: InstanceReport["state"] =
    actual === "running"
      ? "running"
      : actual === "exited" || actual === "offline" || i.intended_status === "stopped"
        ? "interrupted"
        : "booting";
  return {
    externalId: String(i.id),
    name: i.label ?? null,
    state,
    providerStatus: `${actual}${i.intended_status ? ` (intended ${i.intended_status})` : ""}`,
  };
}
