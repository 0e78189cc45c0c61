"use server";
import { redirect } from "next/navigation";
import { z } from "zod";
import { formInt, formText, serverAction } from "@/lib/auth/action";
import type { Actor, TenantPrincipal } from "@/lib/auth/principal";
import { validationFailed } from "@/lib/errors";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { changeJobPriority } from "@/lib/jobs/change-job-priority";
import { jobFit } from "@/lib/jobs/job-fit";
import { getJobOrThrow, jobFitContext } from "@/lib/jobs/queries";
import { submitJobBody, type SubmitJobInput } from "@/lib/jobs/schemas";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";

const pages = ["/dashboard/jobs", "/admin/jobs"];

// In the console the size of a job is judged against the organisation's quota and the fleet first,
// so the answer is in those words (jobFit); the API's hard limit stays as the last word.
const consoleSubmitJob = submitJobBody.extend({
  gpu_count: z.number({ error: "A whole number of GPUs" }).int("A whole number of GPUs").min(1, "At least 1 GPU"),
});

async function submitFromConsole(actor: Actor & { principal: TenantPrincipal }, input: SubmitJobInput) {
  const fit = jobFit(await jobFitContext(actor.principal.tenantId), input.gpu_count, input.gpu_type);
  if (fit.level === "never") throw validationFailed([{ path: "gpu_count", message: fit.message! }]);
  return submitJob(actor, submitJobBody.parse(input));
}

export const submitJobAction = serverAction(
  {
    schema: consoleSubmitJob,
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
    access: ["tenant"],
    revalidate: pages,
  },
  async (actor, input) => {
    const job = await submitFromConsole(actor, input);
    return {
      message: job.status === "blocked" ? `“${job.name}” submitted; it waits for quota: ${job.pendingReason}` : `“${job.name}” submitted.`,
      data: { id: job.id },
    };
  },
);

/** The same job again, as it was submitted; opens the new job's page. */
export const resubmitJobAction = serverAction(
  { schema: z.object({ id: z.uuid() }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["tenant"], revalidate: pages },
  async (actor, { id }) => {
    const old = await getJobOrThrow(actor.principal, id);
    const job = await submitFromConsole(actor, {
      name: old.name,
      gpu_count: old.gpuCount,
      gpu_type: old.gpuType,
      priority: old.priority,
      max_retries: old.maxRetries,
      ...(old.clusterId ? { cluster_id: old.clusterId } : {}),
      ...(old.durationS ? { duration_s: old.durationS } : {}),
      ...(old.image ? { image: old.image } : {}),
      ...(old.command ? { command: old.command } : {}),
    });
    redirect(`/dashboard/jobs/${job.id}?resubmitted=${id}`);
  },
);

export const cancelJobAction = serverAction(
  { schema: z.object({ id: z.uuid() }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["operator", "tenant"], revalidate: pages },
  async (actor, { id }) => {
    const job = await cancelJob(actor, id);
    return { message: `“${job.name}” cancelled.` };
  },
);

export const changeJobPriorityAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), priority: z.number().int().min(1, "1 to 10").max(10, "1 to 10") }),
    fromForm: (f) => ({ id: formText(f, "id"), priority: formInt(f, "priority") }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, { id, priority }) => {
    const r = await changeJobPriority(actor, id, priority);
    return { message: r.from === r.to ? `“${r.name}” already has priority ${r.to}.` : `“${r.name}”: priority ${r.from} → ${r.to}.` };
  },
);

export const runCycleAction = serverAction(
  { schema: z.object({}), fromForm: () => ({}), access: ["operator"], revalidate: ["/admin/scheduler", "/admin/jobs"] },
  async () => {
    const c = await runSchedulerCycle("operator");
    return { message: `Cycle ran in ${c.duration_ms} ms: ${c.considered} considered, ${c.placed} placed, ${c.blocked} blocked.` };
  },
);
