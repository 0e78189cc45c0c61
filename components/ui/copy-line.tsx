"use client";
import { useState } from "react";

/** A command to copy in one click (the SSH command, an endpoint's URL). */
export function CopyLine({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="flex flex-wrap items-center gap-2">
      <code aria-label={label} className="select-all break-all rounded bg-slate-900 px-3 py-2 font-mono text-sm text-slate-100">
        {text}
      </code>
      <button
        type="button"
        className="rounded-md px-2 py-1 text-xs font-medium text-indigo-700 ring-1 ring-indigo-200 hover:bg-indigo-50"
        onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true))}
      >
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  );
}
