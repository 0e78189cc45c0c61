import { PodDetail } from "@/components/pods/pod-views";
import { page } from "@/lib/pages/page";
import { podPageData } from "@/lib/pods/pod-page";

export const metadata = { title: "Pod" };

export default page(
  { plane: "tenant", path: "/dashboard/pods/[id]", ids: ["id"], load: ({ principal, ids }) => podPageData(principal, ids.id) },
  ({ data, searchParams: sp }) => <PodDetail {...data} listHref="/dashboard/pods" listLabel="Pods" justCreated={sp.created === "1"} />,
);
