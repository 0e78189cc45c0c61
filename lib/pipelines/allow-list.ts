// Which hosts http steps may call: the operator's TOOL_CALL_ALLOWED_HOSTS, pure. An entry is a host
// (any port), host:port, or *.domain (its subdomains, not the domain itself). Nothing is allowed
// when the list is empty: tool calls reach only what an operator chose.

export function parseAllowList(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);
}

export function hostAllowed(url: URL, allowed: readonly string[]): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = url.port || (url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : "");
  return allowed.some((entry) => {
    const m = /^(.*?)(?::(\d+))?$/.exec(entry.replace(/^\[|\](?=:|$)/g, ""))!;
    const [, h = "", p] = m;
    if (p && p !== port) return false;
    if (h.startsWith("*.")) return host.endsWith(h.slice(1)) && host.length > h.length - 1;
    return host === h;
  });
}
