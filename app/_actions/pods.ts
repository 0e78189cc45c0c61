"use server";
import { redirect } from "next/navigation";
import { z } from "zod";
import { formInt, formText, serverAction } from "@/lib/auth/action";
import { changePodState } from "@/lib/pods/change-pod-state";
import { createPod } from "@/lib/pods/create-pod";
import { createPodBody } from "@/lib/pods/schemas";

const pages = ["/dashboard/pods", "/admin/pods"];

/** "8888, 6006" → [8888, 6006]; anything that is not a port stays as it is, for the schema to name. */
function portsFromForm(text: string | undefined): unknown[] {
  if (!text?.trim()) return [];
  return text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((p) => (/^\d{1,6}$/.test(p) ? Number(p) : p));
}

export const createPodAction = serverAction(
  {
    schema: createPodBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      gpu_type: formText(f, "gpu_type") ?? "",
      gpu_count: formInt(f, "gpu_count"),
      image: formText(f, "image") ?? "",
      ports: portsFromForm(formText(f, "ports")),
      ssh_public_key: formText(f, "ssh_public_key"),
      restart_on_failure: f.get("restart_on_failure") === "on",
    }),
    access: ["tenant"],
    revalidate: pages,
  },
  async (actor, input) => {
    const pod = await createPod(actor, input);
    redirect(`/dashboard/pods/${pod.id}?created=1`);
  },
);

export const podStateAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), action: z.enum(["stop", "start", "terminate"]) }),
    fromForm: (f) => ({ id: formText(f, "id"), action: formText(f, "action") }),
    access: ["operator", "tenant"],
    revalidate: pages,
  },
  async (actor, { id, action }) => {
    const pod = await changePodState(actor, id, action);
    const done = {
      stop: "stopping: its GPUs are released and billing has stopped",
      start: "starting: it is placed on free GPUs as soon as a cycle runs",
      terminate: "terminated",
    };
    return { message: `“${pod.name}” is ${done[action]}.` };
  },
);
