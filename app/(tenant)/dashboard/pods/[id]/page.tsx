import { notFound } from "next/navigation";
import { PodDetail } from "@/components/pods/pod-views";
import { requireTenantPage } from "@/lib/auth/session";
import { listRates } from "@/lib/billing/rates";
import { rateFor } from "@/lib/billing/money";
import { podPageData } from "@/lib/pods/pod-page";

export const metadata = { title: "Pod" };

export default async function TenantPodPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ created?: string }> }) {
  const { id } = await params;
  const p = await requireTenantPage(`/dashboard/pods/${id}`);
  const [data, sp, rates] = await Promise.all([podPageData(p, id), searchParams, listRates()]);
  if (!data) notFound();
  const rate = rateFor(Object.fromEntries(rates.map((r) => [r.gpu_type, r.cents_per_hour])), data.pod.gpu_type);
  return <PodDetail {...data} listHref="/dashboard/pods" listLabel="Pods" justCreated={sp.created === "1"} ratePerHourCents={rate} />;
}
