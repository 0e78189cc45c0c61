import { jobs } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";

export const POST = route(jobs.runScheduler, async ({ reply }) => reply(200, { cycle: await runSchedulerCycle("manual") }));
