import Link from "next/link";
import { Logo } from "@/components/shell/app-shell";

/** The frame of the sign-in, sign-up and password pages: the logo home, one card, links below. */
export function AuthCard({
  title,
  description,
  children,
  below,
}: {
  title: string;
  description?: string;
  children: React.ReactNode;
  below?: React.ReactNode;
}) {
  return (
    <div className="flex min-h-screen flex-col items-center justify-center bg-slate-900 px-4 py-12">
      <Link href="/" className="mb-8" aria-label="GPUForge home">
        <Logo />
      </Link>
      <main className="w-full max-w-md rounded-xl bg-white p-8 shadow-xl">
        <h1 className="text-xl font-semibold text-slate-900">{title}</h1>
        {description ? <p className="mt-1 text-sm text-slate-500">{description}</p> : null}
        {children}
      </main>
      {below ? <div className="mt-6 text-center text-sm text-slate-300">{below}</div> : null}
    </div>
  );
}
