"use client";
import { useCallback, useEffect, useRef, useState } from "react";
import { buttonClass } from "@/components/ui/button";

// The live output of a job attempt or an endpoint replica: the end of its log first, then what
// arrives every two seconds while the work runs. Follows the end unless the reader scrolls up;
// earlier output loads on request. Reads the same API tenants' scripts use.

export interface LogLine {
  seq: number;
  stream: "stdout" | "stderr" | "system";
  text: string;
  at: string;
}

interface Page {
  data: LogLine[];
  next_seq: number | null;
  has_earlier: boolean;
  truncated: boolean;
}

export interface LogSource {
  /** e.g. /api/jobs/{id}/logs */
  url: string;
  /** query parameters naming the run (attempt or replica_id) */
  params: Record<string, string>;
  /** the work may still print: keep polling */
  live: boolean;
}

const POLL_MS = 2_000;

export function LogTail({
  sources,
  labels,
  initial,
  emptyText,
}: {
  sources: LogSource[];
  labels: string[];
  initial: number;
  emptyText: string;
}) {
  const [which, setWhich] = useState(initial);
  const source = sources[which];
  const [lines, setLines] = useState<LogLine[]>([]);
  const [state, setState] = useState<"loading" | "ready" | "error">("loading");
  const [hasEarlier, setHasEarlier] = useState(false);
  const [truncated, setTruncated] = useState(false);
  const [follow, setFollow] = useState(true);
  const next = useRef<number | null>(null);
  const box = useRef<HTMLDivElement>(null);
  // the page re-renders every few seconds with fresh props: follow the run by what it is, not by object identity
  const sourceKey = source ? `${source.url}?${new URLSearchParams(source.params)}` : "";
  const live = useRef(source?.live ?? false);
  live.current = source?.live ?? false;

  const fetchPage = useCallback(
    async (extra: Record<string, string>): Promise<Page> => {
      const r = await fetch(`${sourceKey}&${new URLSearchParams(extra)}`, { headers: { accept: "application/json" }, cache: "no-store" });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      return (await r.json()) as Page;
    },
    [sourceKey],
  );

  // the end of the log, then everything after it
  useEffect(() => {
    if (!sourceKey) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setState("loading");
    setLines([]);
    next.current = null;
    const poll = async () => {
      try {
        const page = await fetchPage(next.current === null ? { tail: "300" } : { after_seq: String(next.current), limit: "500" });
        if (cancelled) return;
        if (next.current === null) setHasEarlier(page.has_earlier);
        if (page.data.length) setLines((prev) => [...prev, ...page.data]);
        next.current = page.next_seq ?? next.current ?? -1;
        setTruncated(page.truncated);
        setState("ready");
        // a full page means more is waiting: read on at once; a run that ended is read once more, in case its last lines were on the way
        if (live.current || page.data.length >= 500) timer = setTimeout(poll, page.data.length >= 500 ? 0 : POLL_MS);
      } catch {
        if (cancelled) return;
        setState("error");
        timer = setTimeout(poll, POLL_MS * 2);
      }
    };
    void poll();
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    };
  }, [sourceKey, fetchPage]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  const loadEarlier = async () => {
    const first = lines[0]?.seq;
    if (first === undefined) return;
    const page = await fetchPage({ tail: "500", before_seq: String(first) });
    setHasEarlier(page.has_earlier);
    setLines((prev) => [...page.data, ...prev]);
    setFollow(false);
  };

  const onScroll = () => {
    const el = box.current;
    if (el) setFollow(el.scrollHeight - el.scrollTop - el.clientHeight < 24);
  };

  return (
    <div>
      <div className="flex flex-wrap items-center justify-between gap-3 border-b border-slate-100 px-5 py-2.5 text-xs text-slate-600">
        <div className="flex items-center gap-2">
          {sources.length > 1 ? (
            <label className="flex items-center gap-2">
              <span>Run</span>
              <select className="rounded-md border-slate-300 py-1 text-xs" value={which} onChange={(e) => setWhich(Number(e.target.value))}>
                {labels.map((l, i) => (
                  <option key={l} value={i}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
          ) : (
            <span>{labels[which]}</span>
          )}
          {source?.live ? (
            <span className="flex items-center gap-1.5">
              <span aria-hidden className="h-2 w-2 animate-pulse rounded-full bg-emerald-500" />
              live
            </span>
          ) : null}
        </div>
        <div className="flex items-center gap-3">
          {hasEarlier ? (
            <button type="button" className={buttonClass("ghost", "sm")} onClick={loadEarlier}>
              Load earlier output
            </button>
          ) : null}
          <label className="flex items-center gap-1.5">
            <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} className="rounded border-slate-300" />
            Follow the end
          </label>
          <span className="tabular-nums">
            {lines.length} chunk{lines.length === 1 ? "" : "s"}
          </span>
        </div>
      </div>
      <div
        ref={box}
        onScroll={onScroll}
        role="log"
        aria-label={`Output of ${labels[which] ?? "the run"}`}
        tabIndex={0}
        className="h-96 overflow-auto bg-slate-950 px-4 py-3 font-mono text-xs leading-5 text-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-500"
      >
        {state === "loading" ? <p className="text-slate-400">Loading output…</p> : null}
        {state === "error" ? <p className="text-amber-300">Could not read the log just now; trying again.</p> : null}
        {state === "ready" && lines.length === 0 ? <p className="text-slate-400">{emptyText}</p> : null}
        {lines.map((l) => (
          <span
            key={l.seq}
            title={new Date(l.at).toISOString()}
            className={
              l.stream === "stderr"
                ? "whitespace-pre-wrap break-all text-amber-200"
                : l.stream === "system"
                  ? "block whitespace-pre-wrap italic text-sky-300"
                  : "whitespace-pre-wrap break-all"
            }
          >
            {l.text}
          </span>
        ))}
      </div>
      {truncated ? (
        <p className="border-t border-slate-100 px-5 py-2 text-xs text-slate-500">
          This run&apos;s log reached its size cap; later output was not kept.
        </p>
      ) : null}
    </div>
  );
}
