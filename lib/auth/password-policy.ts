import { MIN_PASSWORD_LENGTH } from "./password";

// What a new password must be (pure, given the list): long enough, and not one people commonly
// choose. The list of common passwords ships with the project (the 49,233 most common ones from
// @zxcvbn-ts/language-common, MIT licence, compiled from public breach corpora), so the check needs
// no network. A password is also refused when it is a listed one with digits or symbols added, in
// look-alike letters (p@ssw0rd), a repetition (iloveyouiloveyou), a keyboard or alphabet run, or
// mostly the person's own email or company name: NIST SP 800-63B §5.1.1.2's blocklist advice.

export const MAX_PASSWORD_LENGTH = 200;

const RUNS = [
  "qwertyuiopasdfghjklzxcvbnm",
  "qazwsxedcrfvtgbyhnujmikolp",
  "abcdefghijklmnopqrstuvwxyz",
  "0123456789012345678901234567890",
  "1q2w3e4r5t6y7u8i9o0p",
];
const LOOK_ALIKE: Record<string, string> = {
  "@": "a",
  "4": "a",
  "8": "b",
  "3": "e",
  "1": "i",
  "!": "i",
  "0": "o",
  $: "s",
  "5": "s",
  "7": "t",
  "+": "t",
  "2": "z",
};

export interface PasswordContext {
  /** the account's email address, whose local part must not be most of the password */
  email?: string;
  /** other words the password must not be built from: the company, the product's name */
  words?: string[];
}

/** Why `password` is not acceptable, in a sentence a person can act on, or null when it is fine. */
export function passwordProblem(password: string, common: ReadonlySet<string>, context: PasswordContext = {}): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `At least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `At most ${MAX_PASSWORD_LENGTH} characters`;
  const lower = password.toLowerCase();
  if (common.has(lower)) return "This is one of the most common passwords; choose another";
  const core = lower.replace(/^[^a-z]+|[^a-z]+$/g, "");
  const plain = lower
    .split("")
    .map((c) => LOOK_ALIKE[c] ?? c)
    .join("");
  const plainCore = plain.replace(/^[^a-z]+|[^a-z]+$/g, "");
  for (const candidate of [core, plain, plainCore]) {
    if (candidate.length >= 4 && common.has(candidate))
      return "This is a common password with a few characters changed or added; choose another";
  }
  if (isRepetition(lower)) return "This repeats a short sequence; choose a password that does not";
  if (isRun(lower)) return "This is a keyboard or alphabet sequence; choose another";
  if (new Set(lower).size < 5) return "Use more different characters";
  const words = [context.email?.split("@")[0] ?? "", ...(context.words ?? [])]
    .map((w) => w.toLowerCase().replace(/[^a-z0-9]/g, ""))
    .filter((w) => w.length >= 4);
  let rest = lower.replace(/[^a-z0-9]/g, "");
  for (const w of words) rest = rest.split(w).join("");
  if (words.length && rest.length < 8 && rest.length < lower.replace(/[^a-z0-9]/g, "").length)
    return "Do not build the password from your email address or company name";
  return null;
}

/** "abcabcabcabc", "iloveyouiloveyou": the whole string is one unit repeated. */
function isRepetition(s: string): boolean {
  for (let n = 1; n <= s.length / 2; n++) {
    if (s.length % n === 0 && s.slice(0, n).repeat(s.length / n) === s) return true;
  }
  return false;
}

/** A stretch of one keyboard row, the alphabet or the digits, forwards or backwards. */
function isRun(s: string): boolean {
  return RUNS.some((r) => r.includes(s) || r.split("").reverse().join("").includes(s));
}

let list: Promise<ReadonlySet<string>> | undefined;

/** The shipped list of common passwords, loaded once on first use. */
export function commonPasswords(): Promise<ReadonlySet<string>> {
  list ??= import("@zxcvbn-ts/language-common").then(
    (m) => new Set((m.dictionary["passwords-common"] as string[]).map((p) => p.toLowerCase())),
  );
  return list;
}
