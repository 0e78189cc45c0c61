"use client";
import { signOut } from "next-auth/react";
import { useEffect, useRef, useState } from "react";

export function UserMenu({
  name,
  email,
  roleLabel,
  accountHref,
}: {
  name: string;
  email: string;
  roleLabel: string;
  accountHref?: string;
}) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent | KeyboardEvent) => {
      if (e instanceof KeyboardEvent ? e.key === "Escape" : !ref.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", close);
    document.addEventListener("keydown", close);
    return () => {
      document.removeEventListener("mousedown", close);
      document.removeEventListener("keydown", close);
    };
  }, [open]);

  return (
    <div ref={ref} className="relative">
      <button
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        className="flex items-center gap-2 rounded-full py-1 pl-1 pr-3 text-sm text-slate-700 ring-1 ring-slate-200 hover:bg-slate-50"
      >
        <span aria-hidden className="grid h-7 w-7 place-items-center rounded-full bg-indigo-600 text-xs font-semibold text-white">
          {name.slice(0, 1).toUpperCase()}
        </span>
        <span className="hidden sm:inline">{name}</span>
      </button>
      {open ? (
        <div role="menu" className="absolute right-0 z-20 mt-2 w-64 rounded-lg bg-white p-1 shadow-lg ring-1 ring-slate-200">
          <div className="px-3 py-2">
            <p className="truncate text-sm font-medium text-slate-900">{email}</p>
            <p className="text-xs text-slate-500">{roleLabel}</p>
          </div>
          {accountHref ? (
            <a
              role="menuitem"
              href={accountHref}
              className="block w-full rounded-md px-3 py-2 text-left text-sm text-slate-700 hover:bg-slate-100 focus:bg-slate-100"
            >
              Account and security
            </a>
          ) : null}
          <button
            role="menuitem"
            type="button"
            autoFocus
            onClick={() => signOut({ callbackUrl: "/login" })}
            className="w-full rounded-md px-3 py-2 text-left text-sm text-slate-700 hover:bg-slate-100 focus:bg-slate-100"
          >
            Sign out
          </button>
        </div>
      ) : null}
    </div>
  );
}
