import { cn } from "./cn";

export function Table({ caption, children }: { caption: string; children: React.ReactNode }) {
  return (
    <div className="overflow-x-auto">
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <caption className="sr-only">{caption}</caption>
        {children}
      </table>
    </div>
  );
}

export function Th({ children, className }: { children?: React.ReactNode; className?: string }) {
  return (
    <th scope="col" className={cn("px-5 py-2.5 text-left text-xs font-semibold uppercase tracking-wide text-slate-500", className)}>
      {children}
    </th>
  );
}

export function Td({ children, className }: { children?: React.ReactNode; className?: string }) {
  // cells do not wrap unless the caller says how (class order cannot override a utility)
  return <td className={cn(className?.includes("whitespace-") ? null : "whitespace-nowrap", "px-5 py-3 text-slate-700", className)}>{children}</td>;
}
