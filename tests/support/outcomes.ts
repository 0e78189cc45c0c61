// How a call ended, as one string a test can compare: the domain's coded errors are the contract
// (AppError's code), so assertions name the code rather than a message.

type CodedError = { code?: string; details?: Array<{ path?: string }> | unknown };

/** "ok" when the promise resolves; otherwise the error's code (or the error as text when it has none). */
export const codeOf = (p: Promise<unknown>): Promise<string> => p.then(() => "ok", (e: CodedError) => e.code ?? String(e));

/** codeOf, followed by the first invalid field's path where the error names one: "validation_failed:gpu_count". */
export const codeAndFieldOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "ok",
    (e: CodedError) => {
      const first = Array.isArray(e.details) ? (e.details[0] as { path?: string } | undefined) : undefined;
      return `${e.code ?? String(e)}${first ? `:${first.path}` : ""}`;
    },
  );
