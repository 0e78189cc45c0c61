import { notFound } from "next/navigation";
import { PodDetail } from "@/components/pods/pod-views";
import { requireOperatorPage } from "@/lib/auth/session";
import { listRates } from "@/lib/billing/rates";
import { rateFor } from "@/lib/billing/money";
import { podPageData } from "@/lib/pods/pod-page";

export const metadata = { title: "Pod" };

export default async function AdminPodPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const p = await requireOperatorPage(`/admin/pods/${id}`);
  const [data, rates] = await Promise.all([podPageData(p, id), listRates()]);
  if (!data) notFound();
  const rate = rateFor(Object.fromEntries(rates.map((r) => [r.gpu_type, r.cents_per_hour])), data.pod.gpu_type);
  return <PodDetail {...data} listHref="/admin/pods" listLabel="Pods" tenantName={data.tenant.name} ratePerHourCents={rate} />;
}
