// Text for Slack-compatible chat webhooks, pure. Such channels read `<…>` as control sequences —
// `<!channel>` pages everyone, `<https://evil|Click here>` shows a disguised link — and `&` starts
// an entity, so every string a user chose (a job or endpoint name, a demo request's text) is
// escaped before it is placed in a message, and single-line fields lose their line breaks so they
// cannot fake lines of our own (a "Details:" link, say).

/** Escapes the three characters Slack's message format gives meaning to. */
export function chatEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A user-chosen value on one line: control characters become spaces, then it is escaped. */
export function chatLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return chatEscape(s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " "));
}

/** Free text (several lines) shown as a quote, each line escaped, so it reads as the sender's words. */
export function chatQuote(s: string): string {
  return s
    .split(/\r\n|\r|\n|\u2028|\u2029/)
    .map((line) => `> ${chatLine(line)}`)
    .join("\n");
}

/** The same value for email and the operator plane: one line, nothing else changed. */
export function plainLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ");
}
