// Where a sign-in may send the browser afterwards, pure. Only a path of this site survives: the
// value is resolved as a browser would resolve it (backslashes as slashes, tabs and newlines
// dropped, percent-escapes as they decode), and anything that then points at another origin —
// `//evil.example`, `/\evil.example`, `/%5Cevil.example`, `/%09/evil.example`, `https://…` — is refused.

/** The same-origin path (with query and fragment) `raw` leads to, or null. */
export function safeCallbackPath(raw: string | null | undefined, origin: string): string | null {
  if (!raw) return null;
  let decoded = raw;
  // decode repeatedly: `%255C` is `%5C` is `\` to some parser on the way
  for (let i = 0; i < 3; i++) {
    try {
      const next = decodeURIComponent(decoded);
      if (next === decoded) break;
      decoded = next;
    } catch {
      return null;
    }
  }
  // control characters and backslashes have no business in one of our paths
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(decoded) || !decoded.startsWith("/") || decoded.startsWith("//")) return null;
  let url: URL;
  try {
    url = new URL(raw, origin);
  } catch {
    return null;
  }
  if (url.origin !== new URL(origin).origin) return null;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith("//") ? null : path;
}
