// The fleet floor's compact form. At 10,000 GPUs a floor drawn with one element per GPU (and sent
// twice: as HTML and again in the React payload that hydrates it) weighed most of a megabyte, so
// the overview sends each rack as one short string, one letter per node and one per GPU, and the
// browser draws it. Pure: used by the server to encode, by the floor component to draw, and tested.

/** What a GPU cell shows, most urgent first. */
export const CELL_TONES = [
  "unhealthy",
  "offline",
  "attestation_failed",
  "quarantined",
  "wiping",
  "inspecting",
  "releasing",
  "provisioning",
  "maintenance",
  "draining",
  "registered",
  "nodata",
  "idle",
  "low",
  "mid",
  "high",
] as const;
export type CellTone = (typeof CELL_TONES)[number];

const NODE_LETTERS: Record<string, string> = {
  available: "a",
  registered: "r",
  draining: "d",
  maintenance: "m",
  quarantined: "q",
  offline: "o",
  provisioning: "p",
  releasing: "l",
  wiping: "w",
  inspecting: "i",
  attestation_failed: "f",
};
const LETTER_STATUS: Record<string, string> = Object.fromEntries(Object.entries(NODE_LETTERS).map(([k, v]) => [v, k]));

interface GpuIn {
  status: string;
  util: number | null;
}
interface NodeIn {
  status: string;
  reservedBy: string | null;
  gpus: GpuIn[];
}

/** Utilization bands of the legend: idle < 10 %, low < 50 %, mid < 80 %, high ≥ 80 %. */
export function utilBand(util: number): "idle" | "low" | "mid" | "high" {
  return util < 10 ? "idle" : util < 50 ? "low" : util < 80 ? "mid" : "high";
}

/**
 * One node as letters: its status (upper case when a reservation holds it), then one character
 * per GPU: `x` unhealthy, `-` no recent metrics, `0`–`3` the utilization band.
 */
export function encodeNode(n: NodeIn): string {
  const letter = NODE_LETTERS[n.status] ?? "a";
  const gpus = n.gpus.map((g) =>
    g.status === "unhealthy" ? "x" : g.util === null ? "-" : String("idle low mid high".split(" ").indexOf(utilBand(g.util))),
  );
  return (n.reservedBy ? letter.toUpperCase() : letter) + gpus.join("");
}

/** A rack's nodes, in order, separated by spaces. */
export const encodeRack = (nodes: NodeIn[]): string => nodes.map(encodeNode).join(" ");

export interface DecodedNode {
  status: string;
  reserved: boolean;
  cells: CellTone[];
}

const BANDS: CellTone[] = ["idle", "low", "mid", "high"];

/** The cells to draw: an unhealthy GPU shows red whatever its node; a node out of service tints all its others. */
export function decodeNode(code: string): DecodedNode {
  const letter = code[0] ?? "a";
  const status = LETTER_STATUS[letter.toLowerCase()] ?? "available";
  const nodeTone: CellTone | null = status === "available" ? null : (status as CellTone);
  const cells = code
    .slice(1)
    .split("")
    .map((c): CellTone => (c === "x" ? "unhealthy" : (nodeTone ?? (c === "-" ? "nodata" : (BANDS[Number(c)] ?? "nodata")))));
  return { status, reserved: letter !== letter.toLowerCase(), cells };
}

export const decodeRack = (code: string): DecodedNode[] => (code ? code.split(" ").map(decodeNode) : []);
