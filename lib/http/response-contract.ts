import type { FieldIssue } from "@/lib/errors";
import type { Contract } from "./contract";
import { zodIssuesToDetails } from "./error-response";

/**
 * Whether a handler's response is what its contract (and so the OpenAPI document) promises: a
 * status the contract lists, and a body its schema for that status accepts. Returns the problems,
 * none when it matches. The route wrapper runs it when VALIDATE_RESPONSES is set (the test
 * stages), so a serializer that drifts from its published schema fails a test that calls it.
 */
export async function responseContractProblems(contract: Contract, response: Response): Promise<FieldIssue[]> {
  const spec = contract.responses[response.status];
  if (!spec)
    return [
      {
        path: "status",
        message: `${response.status} is not one of the statuses the contract lists (${Object.keys(contract.responses).join(", ")})`,
      },
    ];
  if (!spec.schema) return [];
  const type = response.headers.get("content-type") ?? "";
  if (spec.mediaType)
    return type.startsWith(spec.mediaType)
      ? []
      : [{ path: "content-type", message: `${spec.mediaType} was promised, not ${type || "none"}` }];
  if (!/^application\/(.+\+)?json\b/i.test(type))
    return [{ path: "content-type", message: `a JSON body was promised, not ${type || "none"}` }];
  const body: unknown = await response.clone().json();
  const result = spec.schema.safeParse(body);
  if (!result.success) return zodIssuesToDetails(result.error.issues, "response");
  // zod drops fields its objects do not declare: any it dropped are fields the document does not mention
  return undeclared(body, result.data, "response").map((path) => ({ path, message: "sent, but not in the contract's schema" }));
}

/** Paths of object keys present in what was sent and absent from what the schema kept. */
function undeclared(sent: unknown, kept: unknown, path: string): string[] {
  if (Array.isArray(sent) && Array.isArray(kept)) return sent.flatMap((x, i) => undeclared(x, kept[i], `${path}[${i}]`));
  if (!isRecord(sent) || !isRecord(kept)) return [];
  return Object.keys(sent).flatMap((k) => (k in kept ? undeclared(sent[k], kept[k], `${path}.${k}`) : [`${path}.${k}`]));
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
