import Link from "next/link";
import { USE_CASES } from "@/content/use-cases";

export const metadata = {
  title: "Use cases",
  description:
    "GPU cluster management, AI infrastructure monitoring, multi-tenant GPU platforms, inference SLAs, agentic workflows and GPU billing with GPUForge.",
  alternates: { canonical: "/use-cases" },
};

export default function UseCasesPage() {
  return (
    <main className="mx-auto max-w-6xl px-6 py-16">
      <h1 className="text-4xl font-semibold tracking-tight text-slate-900">What operators run on GPUForge</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-700">One control plane between your GPU hardware and the teams that use it.</p>
      <ul className="mt-10 grid gap-6 md:grid-cols-2 lg:grid-cols-3">
        {USE_CASES.map((u) => (
          <li key={u.slug} className="rounded-xl p-6 ring-1 ring-slate-200 hover:ring-indigo-300">
            <h2 className="font-semibold text-slate-900">
              <Link href={`/use-cases/${u.slug}`} className="hover:underline">
                {u.title}
              </Link>
            </h2>
            <p className="mt-2 text-sm leading-6 text-slate-700">{u.description}</p>
          </li>
        ))}
      </ul>
    </main>
  );
}
