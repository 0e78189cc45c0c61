import { z } from "zod";
import { REDFISH_FAILURES } from "@/lib/redfish/errors";

// The BMC routes' shapes (API.md, "BMC and provisioning"). Pure and importable anywhere: the checks
// that need the deployment (BMC_NETWORKS) or node:crypto (the CA certificate) run in the use case.

/** Whether a string holds a control character (code points 0–31 and 127). */
function hasControl(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 32 || c === 127) return true;
  }
  return false;
}

/** The BMC URL as stored: its origin (scheme://host[:port]), or why it is not one we take. */
export function bmcOrigin(raw: string): { origin: string } | { problem: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { problem: "A full address, e.g. https://10.40.1.17 or https://bmc-r12-n07.mgmt.example" };
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") return { problem: "An https:// (or http://) address" };
  if (u.username || u.password) return { problem: "No credentials in the URL: send them as username and password" };
  if (u.search || u.hash) return { problem: "No query or fragment: the BMC's address only" };
  if (!["", "/", "/redfish/v1", "/redfish/v1/"].includes(u.pathname))
    return { problem: "The BMC's address only (or its /redfish/v1 service root): resources are found from there" };
  if (!u.hostname) return { problem: "A host name or address" };
  return { origin: `${u.protocol}//${u.host}` };
}

export const putBmcBody = z
  .strictObject({
    url: z
      .string({ error: "The BMC's address, e.g. https://10.40.1.17" })
      .trim()
      .min(1, "The BMC's address, e.g. https://10.40.1.17")
      .max(2048, "At most 2048 characters"),
    username: z
      .string({ error: "The BMC account to log in with" })
      .min(1, "The BMC account to log in with")
      .max(128, "At most 128 characters")
      .refine((v) => !hasControl(v), "No control characters"),
    password: z.string({ error: "The BMC account's password" }).min(1, "The BMC account's password").max(256, "At most 256 characters"),
    verify_tls: z.boolean({ error: "true or false" }).optional(),
    ca_pem: z
      .string({ error: "The PEM of the CA (or the BMC's own certificate) to trust" })
      .max(65_536, "At most 64 KiB of PEM")
      .optional(),
    system_id: z
      .string({ error: "The Redfish system's Id (when the BMC manages several)" })
      .trim()
      .min(1, "The Redfish system's Id")
      .max(256, "At most 256 characters")
      .regex(/^[\w.:/-]+$/, "Letters, digits and . _ : / - only")
      .optional(),
  })
  .superRefine((b, ctx) => {
    const url = bmcOrigin(b.url);
    if ("problem" in url) {
      ctx.addIssue({ code: "custom", path: ["url"], message: url.problem });
      return;
    }
    const plain = url.origin.startsWith("http://");
    if (plain && b.verify_tls !== false)
      ctx.addIssue({
        code: "custom",
        path: ["verify_tls"],
        message:
          b.verify_tls === true
            ? "An http:// BMC has no certificate to verify: use https, or set verify_tls to false"
            : "An http:// BMC sends the password unencrypted: use https, or set verify_tls to false to accept that explicitly",
      });
    if (b.ca_pem !== undefined && (plain || b.verify_tls === false))
      ctx.addIssue({
        code: "custom",
        path: ["ca_pem"],
        message: "A CA certificate is only used when an https BMC's certificate is verified",
      });
  })
  .meta({
    id: "PutNodeBmc",
    description:
      "The password is stored encrypted and never returned. http:// needs verify_tls: false, said explicitly. Loopback and link-local addresses are refused unless the deployment's BMC_NETWORKS lists them.",
    example: { url: "https://10.40.1.17", username: "gpuforge", password: "••••••••", verify_tls: true },
  });
export type PutBmcBody = z.output<typeof putBmcBody>;

export const powerBody = z
  .strictObject({ action: z.enum(["on", "off", "restart"], { error: "One of on, off, restart" }) })
  .meta({ id: "PowerNode", example: { action: "restart" } });

export const bmcJsonSchema = z
  .object({
    node_id: z.string(),
    url: z.string(),
    username: z.string(),
    verify_tls: z.boolean(),
    ca_pem_set: z.boolean(),
    system_id: z.string().nullable(),
    /** the stored password can be opened with this deployment's key (false: it was sealed under another; set it again) */
    password_readable: z.boolean(),
    last_contact_at: z.string().nullable(),
    last_error: z.object({ kind: z.enum(REDFISH_FAILURES), message: z.string(), at: z.string() }).nullable(),
    discovered: z
      .object({
        system: z.string().optional(),
        manager: z.string().optional(),
        virtual_media: z.string().optional(),
        virtual_media_on: z.enum(["System", "Manager"]).optional(),
        power_state: z.string().nullable().optional(),
        manufacturer: z.string().nullable().optional(),
        model: z.string().nullable().optional(),
        auth: z.enum(["session", "basic"]).optional(),
      })
      .nullable(),
    updated_at: z.string(),
    updated_by: z.string(),
  })
  .meta({ id: "NodeBmc" });
export type BmcJson = z.infer<typeof bmcJsonSchema>;

export const powerReplySchema = z
  .object({
    power: z.object({
      action: z.enum(["on", "off", "restart"]),
      /** the ResetType sent; null when the system was already in that state */
      reset_type: z.string().nullable(),
      power_state_before: z.string().nullable(),
      accepted_at: z.string(),
    }),
  })
  .meta({ id: "PowerNodeReply" });
