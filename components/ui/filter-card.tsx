import Link from "next/link";
import { Stat } from "./card";
import { cn } from "./cn";

/**
 * A summary figure that is also the list's filter for it: a link to the view it counts, marked as
 * the current one when the list shows it (issue 32: the queue's cards counted running jobs while
 * the list below showed none, and clicking them did nothing).
 */
export function FilterCard({
  href,
  active,
  label,
  value,
  hint,
}: {
  href: string;
  active: boolean;
  label: string;
  value: React.ReactNode;
  hint?: string;
}) {
  return (
    <Link
      href={href}
      aria-current={active ? "true" : undefined}
      className={cn(
        "block rounded-lg transition hover:shadow-md focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600",
        active && "ring-2 ring-indigo-600",
      )}
    >
      <Stat label={label} value={value} hint={hint} />
    </Link>
  );
}
