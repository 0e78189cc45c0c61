import Link from "next/link";
import { Logo } from "@/components/shell/app-shell";

export default function MarketingLayout({ children }: { children: React.ReactNode }) {
  return (
    <div className="min-h-screen bg-white">
      <header className="border-b border-slate-200">
        <div className="mx-auto flex h-16 max-w-6xl items-center justify-between px-6">
          <Link href="/" aria-label="GPUForge home"><Logo className="text-slate-900" /></Link>
          <nav aria-label="Main" className="flex items-center gap-6 text-sm font-medium text-slate-600">
            <Link href="/docs/api" className="hover:text-slate-900">API</Link>
            <Link href="/login" className="rounded-md bg-slate-900 px-3.5 py-2 text-white hover:bg-slate-700">Sign in</Link>
          </nav>
        </div>
      </header>
      {children}
      <footer className="border-t border-slate-200 py-8 text-center text-sm text-slate-500">
        GPUForge — the control plane for GPU clouds.
      </footer>
    </div>
  );
}
