import { Logo } from "@/components/shell/app-shell";
import { NotFoundMessage } from "@/components/shell/not-found-message";

export const metadata = { title: "Not found" };

export default function NotFound() {
  // Unmatched addresses anywhere, with HTTP 404; the console planes have their own, inside their shell.
  return (
    <main className="flex min-h-screen flex-col items-center justify-center gap-6 bg-slate-50 px-6">
      <Logo className="text-slate-900" />
      <NotFoundMessage />
    </main>
  );
}
