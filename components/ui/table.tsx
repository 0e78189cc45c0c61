import { cn } from "./cn";
import { ScrollRegion } from "./scroll-region";

export function Table({ caption, children }: { caption: string; children: React.ReactNode }) {
  return (
    <ScrollRegion label={caption} className="overflow-x-auto">
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <caption className="sr-only">{caption}</caption>
        {children}
      </table>
    </ScrollRegion>
  );
}

/**
 * A column kept in view while a wide table scrolls sideways (a phone): the name on the left, the
 * actions on the right, so a row's subject and what can be done to it are always reachable.
 */
export type Pin = "left" | "right";
const pinned: Record<Pin, string> = {
  left: "sticky left-0 z-[1] shadow-[inset_-1px_0_0_rgb(241,245,249)]",
  right: "sticky right-0 z-[1] shadow-[inset_1px_0_0_rgb(241,245,249)]",
};

export function Th({ children, className, pin }: { children?: React.ReactNode; className?: string; pin?: Pin }) {
  return (
    <th
      scope="col"
      className={cn(
        "px-5 py-2.5 text-left text-xs font-semibold uppercase tracking-wide text-slate-500",
        pin && `${pinned[pin]} bg-slate-50`,
        className,
      )}
    >
      {children}
    </th>
  );
}

/** A cell; it keeps to one line unless `wrap` is set (for messages and descriptions). */
export function Td({
  children,
  className,
  wrap = false,
  pin,
}: {
  children?: React.ReactNode;
  className?: string;
  wrap?: boolean;
  pin?: Pin;
}) {
  return (
    <td
      className={cn(
        wrap ? "whitespace-normal" : "whitespace-nowrap",
        "px-5 py-3 text-slate-700",
        pin && `${pinned[pin]} bg-white`,
        className,
      )}
    >
      {children}
    </td>
  );
}
