// Host ports the agent publishes containers' ports on (a pod's SSH and notebook ports, a replica's
// serving port): picked from its own range (AGENT_PUBLISHED_PORTS, default 40000-44999), never two
// placements on one port. The control plane refuses privileged ports (below 1024) anyway.

export const DEFAULT_PUBLISHED_PORTS = "40000-44999";

export class PortPool {
  private used = new Set<number>();

  constructor(
    readonly min: number,
    readonly max: number,
    private readonly random: () => number = Math.random,
  ) {
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1024 || max > 65_535 || min > max)
      throw new Error(`not a port range: ${min}-${max}`);
  }

  /** `40000-44999` (AGENT_PUBLISHED_PORTS); throws on anything else. */
  static parse(text: string): PortPool {
    const m = /^\s*(\d{4,5})\s*-\s*(\d{4,5})\s*$/.exec(text);
    if (!m) throw new Error(`AGENT_PUBLISHED_PORTS must look like 40000-44999, not ${JSON.stringify(text)}`);
    return new PortPool(Number(m[1]), Number(m[2]));
  }

  /** `count` free ports, marked used; null when the range has too few left. */
  take(count: number): number[] | null {
    const size = this.max - this.min + 1;
    if (size - this.used.size < count) return null;
    const out: number[] = [];
    // from a random point, so a restarted agent does not reuse a port a dying container still holds
    let p = this.min + Math.floor(this.random() * size);
    while (out.length < count) {
      if (!this.used.has(p)) {
        this.used.add(p);
        out.push(p);
      }
      p = p >= this.max ? this.min : p + 1;
    }
    return out;
  }

  /** Marks ports used (containers found again after a restart). */
  claim(ports: number[]): void {
    for (const p of ports) this.used.add(p);
  }

  release(ports: number[]): void {
    for (const p of ports) this.used.delete(p);
  }
}
