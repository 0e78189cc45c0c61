"use server";
import { z } from "zod";
import { formInt, formText, serverAction } from "@/lib/auth/action";
import { finishJob } from "@/lib/jobs/finish-job";
import { submitJobBody } from "@/lib/jobs/schemas";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";

const pages = ["/dashboard/jobs", "/admin/jobs"];

export const submitJobAction = serverAction(
  {
    schema: submitJobBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      gpu_count: formInt(f, "gpu_count"),
      gpu_type: formText(f, "gpu_type") ?? "",
      priority: formInt(f, "priority") ?? 5,
      max_retries: formInt(f, "max_retries") ?? 0,
      duration_s: formInt(f, "duration_s"),
      image: formText(f, "image"),
      command: formText(f, "command"),
      reservation_id: formText(f, "reservation_id"),
    }),
    allow: (p) => p.kind === "tenant",
    revalidate: pages,
  },
  async (actor, input) => {
    const job = await submitJob(actor, input);
    return { message: job.status === "blocked" ? `“${job.name}” is waiting for quota.` : `“${job.name}” submitted.`, data: { id: job.id } };
  },
);

export const cancelJobAction = serverAction(
  { schema: z.object({ id: z.uuid() }), fromForm: (f) => ({ id: formText(f, "id") }), allow: (p) => p.kind === "tenant" || p.kind === "operator", revalidate: pages },
  async (actor, { id }) => {
    const job = await finishJob(actor, id, { status: "cancelled" });
    return { message: `“${job.name}” cancelled.` };
  },
);

export const runCycleAction = serverAction(
  { schema: z.object({}), fromForm: () => ({}), allow: (p) => p.kind === "operator", revalidate: ["/admin/scheduler", "/admin/jobs"] },
  async () => {
    const c = await runSchedulerCycle("operator");
    return { message: `Cycle ran in ${c.duration_ms} ms: ${c.considered} considered, ${c.placed} placed, ${c.blocked} blocked.` };
  },
);
