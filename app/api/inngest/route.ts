import { serve } from "inngest/next";
import { functions } from "@/inngest/functions";
import { inngestConfigured } from "@/lib/env";
import { inngest } from "@/inngest/client";

// Served only when an Inngest server is configured; otherwise the in-process driver
// (instrumentation.ts) runs the same functions and this endpoint says so plainly.
const handlers = serve({ client: inngest, functions });

function notConfigured(): Response {
  return Response.json(
    {
      error: {
        code: "not_found",
        message: "Inngest is not configured (set INNGEST_EVENT_KEY and INNGEST_SIGNING_KEY); background work runs in-process",
        details: [],
      },
    },
    { status: 404 },
  );
}

type Handler = (req: Request, ctx: unknown) => Promise<Response>;
const guard =
  (h: Handler): Handler =>
  (req, ctx) =>
    inngestConfigured() ? h(req, ctx) : Promise.resolve(notConfigured());

export const GET = guard(handlers.GET as Handler);
export const POST = guard(handlers.POST as Handler);
export const PUT = guard(handlers.PUT as Handler);
