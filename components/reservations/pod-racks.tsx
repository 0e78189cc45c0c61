// Nodes laid out as the interconnect groups them: a card per pod, a row per rack. The fleet floor
// by tenant and the nodes of a reservation or a job share it; each draws its own nodes.

export function PodRacks<T>({
  items,
  pod,
  rack,
  node,
  className = "grid gap-4 p-5 sm:grid-cols-2",
}: {
  items: T[];
  pod: (t: T) => string;
  rack: (t: T) => string;
  node: (t: T) => React.ReactNode;
  className?: string;
}) {
  const pods = new Map<string, Map<string, T[]>>();
  for (const t of items) {
    const racks = pods.get(pod(t)) ?? new Map<string, T[]>();
    racks.set(rack(t), [...(racks.get(rack(t)) ?? []), t]);
    pods.set(pod(t), racks);
  }
  return (
    <div className={className}>
      {[...pods].map(([name, racks]) => (
        <section key={name} className="rounded-md ring-1 ring-slate-200">
          <h3 className="border-b border-slate-100 bg-slate-50 px-3 py-1.5 text-xs font-semibold text-slate-700">{name}</h3>
          <div className="space-y-2 p-3">
            {[...racks].map(([r, list]) => (
              <div key={r} className="flex items-start gap-2">
                <span className="w-16 shrink-0 pt-1 text-[11px] text-slate-500">{r}</span>
                <ul className="flex flex-wrap gap-1.5">{list.map(node)}</ul>
              </div>
            ))}
          </div>
        </section>
      ))}
    </div>
  );
}
