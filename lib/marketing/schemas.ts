import { z } from "zod";

const email = z.email("Must be an email address").max(254).toLowerCase();

export const demoRequestBody = z
  .strictObject({
    name: z.string().trim().min(1, "Your name is required").max(120, "At most 120 characters"),
    email,
    company: z.string().trim().max(120, "At most 120 characters").optional(),
    message: z.string().trim().max(2000, "At most 2,000 characters").optional(),
  })
  .meta({
    id: "DemoRequest",
    example: { name: "Ada Lovelace", email: "ada@example.com", company: "Analytical GPU Co", message: "400 H100s across two sites" },
  });

export const earlyAccessBody = z.strictObject({ email }).meta({ id: "EarlyAccess", example: { email: "ops@example.com" } });

export const pageviewBody = z
  .strictObject({
    path: z
      .string()
      .max(300)
      .regex(/^\/[^\s]*$/, "Must be a path starting with /"),
    referrer: z.string().max(2000).optional(),
  })
  .meta({ id: "PageView", example: { path: "/use-cases/gpu-cluster-management", referrer: "https://www.google.com/" } });

export const DEMO_REQUEST_STATUSES = ["new", "contacted", "closed"] as const;
export const updateDemoRequestBody = z.strictObject({ status: z.enum(DEMO_REQUEST_STATUSES) }).meta({ id: "UpdateDemoRequest" });

export const demoRequestJsonSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    company: z.string().nullable(),
    message: z.string().nullable(),
    status: z.enum(DEMO_REQUEST_STATUSES),
    handled_by: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: "DemoRequestRecord" });

export const analyticsQuery = z.strictObject({ days: z.coerce.number().int().min(1).max(365).default(30) });

export const analyticsJsonSchema = z
  .object({
    days: z.number().int(),
    views: z.number().int(),
    sessions: z.number().int(),
    demo_requests: z.number().int(),
    early_access: z.number().int(),
    conversion_pct: z.number().nullable(),
    by_day: z.array(z.object({ day: z.string(), views: z.number().int(), sessions: z.number().int() })),
    top_pages: z.array(z.object({ path: z.string(), views: z.number().int() })),
    referrers: z.array(z.object({ host: z.string(), views: z.number().int() })),
  })
  .meta({ id: "SiteAnalytics" });
