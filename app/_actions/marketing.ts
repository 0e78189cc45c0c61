"use server";
import { marketing } from "@/lib/api/contracts";
import { formText, serverAction } from "@/lib/auth/action";
import { createDemoRequest, signUpEarlyAccess } from "@/lib/marketing/site";
import { demoRequestBody, earlyAccessBody } from "@/lib/marketing/schemas";

// The public site's forms: no session, the API's schemas, and the API's per-address limits.

export const requestDemoAction = serverAction(
  {
    schema: demoRequestBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      email: formText(f, "email") ?? "",
      company: formText(f, "company"),
      message: formText(f, "message"),
    }),
    access: "public",
    rateLimit: { key: marketing.createDemoRequest.operationId, perMinute: marketing.createDemoRequest.rateLimitPerMinute! },
  },
  async (_actor, data) => {
    await createDemoRequest(data);
    return { message: `Thanks, ${data.name.split(" ")[0]}. We will write to ${data.email} within one business day.` };
  },
);

export const earlyAccessAction = serverAction(
  {
    schema: earlyAccessBody,
    fromForm: (f) => ({ email: formText(f, "email") ?? "" }),
    access: "public",
    rateLimit: { key: marketing.createEarlyAccess.operationId, perMinute: marketing.createEarlyAccess.rateLimitPerMinute! },
  },
  async (_actor, data) => {
    await signUpEarlyAccess(data.email);
    return { message: "You are on the list. We will email you when the next release opens." };
  },
);
