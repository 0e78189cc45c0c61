import { validationFailed } from "@/lib/errors";
import { productName } from "@/lib/platform/public-url";
import { commonPasswords, passwordProblem, type PasswordContext } from "@/lib/auth/password-policy";

/** Refuses a new password the policy rejects (400 naming `field`), checked against the shipped list of common passwords. */
export async function assertAcceptablePassword(password: string, context: PasswordContext = {}, field = "password"): Promise<void> {
  const problem = passwordProblem(password, await commonPasswords(), { ...context, words: [...(context.words ?? []), productName()] });
  if (problem) throw validationFailed([{ path: field, message: problem }]);
}
