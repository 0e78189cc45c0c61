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

/** A cell; it keeps to one line unless `wrap` is set (for messages and descriptions). */
export function Td({ children, className, wrap = false }: { children?: React.ReactNode; className?: string; wrap?: boolean }) {
  return <td className={cn(wrap ? "whitespace-normal" : "whitespace-nowrap", "px-5 py-3 text-slate-700", className)}>{children}</td>;
}
