// How a call ended, as one string a test can compare: the domain's coded errors are the contract
// (AppError's code), so assertions name the code rather than a message.

type CodedError = { code?: string; details?: unknown };

/** The error's code, or the error as text when it has none. */
const codeOrText = (e: unknown): string => (e as CodedError | null)?.code ?? (e instanceof Error ? String(e) : JSON.stringify(e));

/** "ok" when the promise resolves; otherwise the error's code (or the error as text when it has none). */
export const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "ok",
    (e: unknown) => codeOrText(e),
  );

/** codeOf, followed by the first invalid field's path where the error names one: "validation_failed:gpu_count". */
export const codeAndFieldOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "ok",
    (e: unknown) => {
      const details = (e as CodedError | null)?.details;
      const first = Array.isArray(details) ? (details[0] as { path?: string } | undefined) : undefined;
      return `${codeOrText(e)}${first ? `:${first.path}` : ""}`;
    },
  );
