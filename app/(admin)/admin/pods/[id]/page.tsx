import { PodDetail } from "@/components/pods/pod-views";
import { page } from "@/lib/pages/page";
import { podPageData } from "@/lib/pods/pod-page";

export const metadata = { title: "Pod" };

export default page(
  { plane: "operator", path: "/admin/pods/[id]", ids: ["id"], load: ({ principal, ids }) => podPageData(principal, ids.id) },
  ({ data }) => <PodDetail {...data} listHref="/admin/pods" listLabel="Pods" tenantName={data.tenant.name} />,
);
