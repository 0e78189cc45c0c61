import type { CellTone } from "@/lib/fleet/floor-code";

// One colour per cell tone, as an SVG stroke (the floor) and as a background (its legend and the
// rack page). Literal class names, so Tailwind generates them; the strokes are short classes of
// globals.css (`ft-*`), since a large floor repeats them hundreds of times.
export const TONES: Record<CellTone, { stroke: string; bg: string; label: string }> = {
  idle: { stroke: "ft-idle", bg: "bg-emerald-100", label: "< 10 %" },
  low: { stroke: "ft-low", bg: "bg-emerald-300", label: "10–50 %" },
  mid: { stroke: "ft-mid", bg: "bg-emerald-500", label: "50–80 %" },
  high: { stroke: "ft-high", bg: "bg-emerald-700", label: "≥ 80 %" },
  nodata: { stroke: "ft-nodata", bg: "bg-slate-200", label: "no data" },
  unhealthy: { stroke: "ft-unhealthy", bg: "bg-red-600", label: "unhealthy GPU" },
  registered: { stroke: "ft-registered", bg: "bg-sky-300", label: "registered" },
  draining: { stroke: "ft-draining", bg: "bg-amber-400", label: "draining" },
  maintenance: { stroke: "ft-maintenance", bg: "bg-slate-400", label: "maintenance" },
  quarantined: { stroke: "ft-quarantined", bg: "bg-rose-300", label: "quarantined" },
  offline: { stroke: "ft-offline", bg: "bg-slate-700", label: "offline" },
  // between tenants, or being provisioned: one family of colours, in service once they pass
  provisioning: { stroke: "ft-provisioning", bg: "bg-indigo-300", label: "provisioning" },
  releasing: { stroke: "ft-releasing", bg: "bg-cyan-200", label: "releasing" },
  wiping: { stroke: "ft-wiping", bg: "bg-cyan-400", label: "wiping" },
  inspecting: { stroke: "ft-inspecting", bg: "bg-teal-500", label: "inspecting" },
  attestation_failed: { stroke: "ft-attestation-failed", bg: "bg-fuchsia-600", label: "attestation failed" },
};
