import { z } from "zod";
import { ALERT_STATUSES } from "./rule-types";

// Alertmanager's webhook payload (version 4), as its documentation lists it. Labels and
// annotations are free maps; everything else is named, so a payload that is not Alertmanager's
// is refused with the field that does not fit.

const labelMap = z.record(z.string().max(200), z.string().max(4_000)).refine((m) => Object.keys(m).length <= 100, "At most 100 labels");
const time = z.string().max(64);

const alertmanagerAlert = z.strictObject({
  status: z.enum(ALERT_STATUSES),
  labels: labelMap,
  annotations: labelMap.default({}),
  startsAt: time,
  endsAt: time.optional(),
  generatorURL: z.string().max(2_000).optional(),
  fingerprint: z.string().min(1).max(200),
});

export const alertmanagerWebhookBody = z
  .strictObject({
    version: z.string().max(10),
    groupKey: z.string().max(2_000),
    truncatedAlerts: z.number().int().min(0).optional(),
    status: z.enum(ALERT_STATUSES),
    receiver: z.string().max(500),
    groupLabels: labelMap,
    commonLabels: labelMap,
    commonAnnotations: labelMap,
    externalURL: z.string().max(2_000),
    alerts: z.array(alertmanagerAlert).max(1_000),
  })
  .meta({
    id: "AlertmanagerWebhook",
    example: {
      version: "4",
      groupKey: '{}:{alertname="GPUXidError"}',
      status: "firing",
      receiver: "gpuforge",
      groupLabels: { alertname: "GPUXidError" },
      commonLabels: { alertname: "GPUXidError", severity: "critical" },
      commonAnnotations: {},
      externalURL: "http://alertmanager:9093",
      alerts: [
        {
          status: "firing",
          labels: {
            alertname: "GPUXidError",
            severity: "critical",
            Hostname: "gpu-node-001",
            UUID: "GPU-3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40",
            gpu: "0",
          },
          annotations: { summary: "XID 79 on GPU 0 of gpu-node-001" },
          startsAt: "2026-11-30T14:00:00Z",
          fingerprint: "9f1c2a7b3d4e5f60",
        },
      ],
    },
  });

export const alertmanagerReply = z.object({
  received: z.number(),
  fired: z.number().meta({ description: "New firing events (a re-sent alert that already fires counts nothing)" }),
  resolved: z.number(),
  remediation: z
    .object({ quarantined: z.array(z.string()), capped: z.array(z.string()) })
    .meta({ description: "Nodes quarantined now, or past the blast-radius cap" }),
  unmatched: z
    .array(z.object({ index: z.number(), reason: z.string() }))
    .meta({ description: "Alerts that named no GPU or node GPUForge knows" }),
});

export type AlertmanagerWebhook = z.output<typeof alertmanagerWebhookBody>;
