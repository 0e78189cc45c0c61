// The fleet's XID policy: one table, one place.
//
// Source: NVIDIA, "XID Errors" (GPU Deployment and Management Documentation,
// docs.nvidia.com/deploy/xid-errors), which lists for each XID its cause and the action NVIDIA
// recommends. "fatal" here means NVIDIA tells operators to reset the GPU, drain the node or
// replace hardware: the GPU is marked unhealthy and must not take new work. "application" XIDs
// are caused by the workload (bad kernels, faults in user code) and say nothing about the
// hardware. "informational" ones report a condition the driver already handled.

type XidSeverity = "fatal" | "application" | "informational";

export interface XidRule {
  xid: number;
  name: string;
  severity: XidSeverity;
  action: string;
}

export const XID_POLICY: readonly XidRule[] = [
  { xid: 13, name: "Graphics engine exception", severity: "application", action: "Check the application; hardware is not implicated" },
  {
    xid: 31,
    name: "GPU memory page fault (MMU fault)",
    severity: "application",
    action: "Check the application for illegal memory access",
  },
  { xid: 43, name: "GPU stopped processing", severity: "application", action: "The faulting context was killed; check the application" },
  {
    xid: 45,
    name: "Preemptive cleanup, due to previous errors",
    severity: "application",
    action: "Follows another error or a killed process; none by itself",
  },
  { xid: 48, name: "Double-bit ECC error", severity: "fatal", action: "Drain and reset the GPU; replace if it repeats" },
  { xid: 61, name: "Internal micro-controller breakpoint/warning", severity: "fatal", action: "Reset the GPU" },
  { xid: 62, name: "Internal micro-controller halt", severity: "fatal", action: "Reset the GPU" },
  {
    xid: 63,
    name: "ECC page retirement or row-remapping recording event",
    severity: "informational",
    action: "None while remapping succeeds; reset at a convenient time",
  },
  {
    xid: 64,
    name: "ECC page retirement or row-remapper recording failure",
    severity: "fatal",
    action: "Drain and reset; replace the GPU if it repeats",
  },
  { xid: 68, name: "NVDEC0 exception (video processor)", severity: "application", action: "Check the application" },
  { xid: 74, name: "NVLink error", severity: "fatal", action: "Drain and reset the GPU; inspect NVLink/NVSwitch hardware" },
  { xid: 79, name: "GPU has fallen off the bus", severity: "fatal", action: "Drain the node, reset or power-cycle; inspect hardware" },
  { xid: 92, name: "High single-bit ECC error rate", severity: "informational", action: "Watch the rate; plan a reset" },
  {
    xid: 94,
    name: "Contained ECC error",
    severity: "informational",
    action: "The affected application was stopped; the GPU keeps working",
  },
  { xid: 95, name: "Uncontained ECC error", severity: "fatal", action: "Drain and reset the GPU" },
  { xid: 119, name: "GSP RPC timeout", severity: "fatal", action: "Reset the GPU" },
  { xid: 120, name: "GSP error", severity: "fatal", action: "Reset the GPU" },
  { xid: 140, name: "Unrecovered ECC error", severity: "fatal", action: "Drain and reset the GPU" },
];

const BY_XID = new Map(XID_POLICY.map((r) => [r.xid, r]));

/** Unknown XIDs are not treated as fatal (they would empty the fleet on a new driver's codes) but lower the health score. */
export function classifyXid(xid: number): XidRule | { xid: number; name: string; severity: "unknown"; action: string } {
  return BY_XID.get(xid) ?? { xid, name: "Unlisted XID", severity: "unknown", action: "Look it up in NVIDIA's XID catalogue" };
}

export function isFatalXid(xid: number): boolean {
  return BY_XID.get(xid)?.severity === "fatal";
}

export const FATAL_XIDS: readonly number[] = XID_POLICY.filter((r) => r.severity === "fatal").map((r) => r.xid);

/** The first fatal XID in a report, if any. */
export function firstFatalXid(xids: readonly number[] | null | undefined): number | undefined {
  return xids?.find(isFatalXid);
}
