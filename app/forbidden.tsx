import Link from "next/link";

export const metadata = { title: "Not allowed" };

export default function Forbidden() {
  // Rendered by forbidden() with HTTP status 403.
  return (
    <main className="flex min-h-screen flex-col items-center justify-center gap-3 px-6 text-center">
      <p className="text-sm font-semibold text-indigo-600">403</p>
      <h1 className="text-2xl font-semibold text-slate-900">This area is for platform operators</h1>
      <p className="max-w-md text-slate-600">Your account belongs to a tenant. Your work, users and keys are in your dashboard.</p>
      <Link href="/dashboard" className="mt-2 rounded-md bg-indigo-600 px-4 py-2 text-sm font-medium text-white hover:bg-indigo-500">Go to your dashboard</Link>
    </main>
  );
}
