import { dollarsToCentsUp } from "../http";
import { ProviderError, type InstanceReport, type LaunchSpec, type ProviderAdapter, type ProviderOffer } from "../types";
import { deployPod, getPod, gpuTypesAndDataCenters, myPods, stockIn, terminatePod, type RunpodConfig, type RunpodPod } from "./api";

// RunPod in GPUForge's terms. Offers are the secure cloud only (RunPod's own data centers; the
// community cloud's hosts are third parties we would not resell), per data center and GPU count,
// on demand at securePrice and as spot pods at secureSpotPrice (interruptible), both documented as
// dollars per GPU-hour on gpuTypes. A data center offers a GPU type when gpuTypes.lowestPrice for it
// reports a stockStatus (null: none there); maxUnreservedGpuCount bounds the counts offered.
//
// Pods are containers: the start script goes in as an environment variable and the container's
// command (dockerArgs) decodes and runs it, so GPUFORGE_URL, GPUFORGE_AGENT_KEY and GPUFORGE_HOSTNAME
// reach the agent through RunPod's own env list.

const COUNTS = [1, 2, 4, 8];
const SEP = "|";

interface ParsedOffer {
  gpuTypeId: string;
  dataCenterId: string;
  gpuCount: number;
  spot: boolean;
}

function runpodOfferId(o: ParsedOffer): string {
  return [o.dataCenterId, `${o.gpuCount}x`, o.spot ? "spot" : "od", o.gpuTypeId].join(SEP);
}

function parseOfferId(id: string): ParsedOffer {
  const [dataCenterId, count, kind, ...type] = id.split(SEP);
  const gpuCount = Number(/^(\d+)x$/.exec(count ?? "")?.[1]);
  if (!dataCenterId || !gpuCount || (kind !== "spot" && kind !== "od") || type.length === 0)
    throw new ProviderError("runpod", "rejected", `not a RunPod offer id: ${id}`);
  return { dataCenterId, gpuCount, spot: kind === "spot", gpuTypeId: type.join(SEP) };
}

export function runpodAdapter(cfg: RunpodConfig & { image: string }): ProviderAdapter {
  return {
    name: "runpod",

    async listOffers() {
      const { dataCenters, gpuTypes } = await gpuTypesAndDataCenters(cfg);
      const offers: ProviderOffer[] = [];
      for (const dc of dataCenters) {
        const stock = await stockIn(cfg, dc);
        for (const g of gpuTypes) {
          const s = stock.get(g.id);
          if (!g.secureCloud || !s?.stockStatus) continue;
          const max = Math.min(g.maxGpuCount ?? 8, s.maxUnreservedGpuCount ?? g.maxGpuCount ?? 8);
          for (const gpuCount of COUNTS.filter((c) => c <= max)) {
            for (const [spot, dollars] of [
              [false, g.securePrice],
              [true, g.secureSpotPrice],
            ] as const) {
              if (!dollars || dollars <= 0) continue;
              offers.push({
                offerId: runpodOfferId({ gpuTypeId: g.id, dataCenterId: dc, gpuCount, spot }),
                providerGpuType: g.id,
                gpuCount,
                region: dc,
                interruptible: spot,
                costCentsPerGpuHour: dollarsToCentsUp(dollars),
              });
            }
          }
        }
      }
      return offers;
    },

    async launch(spec: LaunchSpec) {
      const o = parseOfferId(spec.offer.offerId);
      const env = { ...spec.env, GPUFORGE_START_SCRIPT_B64: Buffer.from(spec.startScript).toString("base64") };
      const pod = await deployPod(cfg, {
        cloudType: "SECURE",
        gpuCount: o.gpuCount,
        gpuTypeId: o.gpuTypeId,
        dataCenterId: o.dataCenterId,
        name: spec.name,
        imageName: cfg.image,
        dockerArgs: `sh -c 'echo "$GPUFORGE_START_SCRIPT_B64" | base64 -d | sh'`,
        containerDiskInGb: 40,
        volumeInGb: 0,
        supportPublicIp: true,
        startSsh: false,
        env: Object.entries(env).map(([key, value]) => ({ key, value })),
        // the bid is the offer's spot price: what the offer said it costs (dollars per GPU-hour)
        ...(o.spot ? { bidPerGpu: spec.offer.costCentsPerGpuHour / 100 } : {}),
      });
      return { externalId: pod.id };
    },

    async status(externalId: string) {
      const pod = await getPod(cfg, externalId);
      return pod ? report(pod) : { externalId, name: null, state: "gone", providerStatus: "not found" };
    },

    async terminate(externalId: string) {
      await terminatePod(cfg, externalId);
    },

    async listInstances() {
      return (await myPods(cfg)).map(report);
    },
  };
}

/** desiredStatus RUNNING with a runtime is up; without one it is still pulling or starting; EXITED was stopped (a spot pod outbid). */
function report(pod: RunpodPod): InstanceReport {
  const s = pod.desiredStatus ?? "UNKNOWN";
  const state: InstanceReport["state"] =
    s === "TERMINATED" ? "gone" : s === "EXITED" ? "interrupted" : s === "RUNNING" && pod.runtime ? "running" : "booting";
  return { externalId: pod.id, name: pod.name, state, providerStatus: pod.runtime ? s : `${s} (no runtime yet)` };
}
