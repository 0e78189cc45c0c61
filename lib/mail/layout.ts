// One account mail, pure: a heading, paragraphs, an optional button and small print, rendered as
// plain text and as HTML from the same parts, so the two never say different things. Every value
// may carry a visitor's words (a company name): HTML escapes them; plain text takes them as written
// with control characters removed (a header-injection attempt stays one line).

export interface MailParts {
  product: string;
  /** the site's address, for the footer */
  publicUrl: string;
  subject: string;
  heading: string;
  paragraphs: string[];
  action?: { label: string; url: string };
  /** shown under the button: e.g. "This link works once and expires in 48 hours." */
  note?: string;
  /** why the recipient got this, in the footer */
  footer: string;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

// eslint-disable-next-line no-control-regex
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
// eslint-disable-next-line no-control-regex
const clean = (s: string) => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

export function renderMail(m: MailParts): RenderedMail {
  const subject = oneLine(`${m.subject} · ${m.product}`).slice(0, 200);
  const text = [
    clean(m.heading),
    "",
    ...m.paragraphs.flatMap((p) => [clean(p), ""]),
    ...(m.action ? [`${clean(m.action.label)}: ${m.action.url}`, ""] : []),
    ...(m.note ? [clean(m.note), ""] : []),
    "--",
    `${clean(m.footer)}`,
    `${m.product} · ${m.publicUrl}`,
  ].join("\n");
  const p = (s: string) => `<p style="margin:0 0 16px;line-height:1.5">${escapeHtml(clean(s)).replace(/\n/g, "<br>")}</p>`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;background:#f1f5f9;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#0f172a">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f1f5f9;padding:32px 12px"><tr><td align="center">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:12px;padding:32px">
<tr><td>
<p style="margin:0 0 24px;font-weight:700;font-size:16px;color:#4338ca">${escapeHtml(m.product)}</p>
<h1 style="margin:0 0 16px;font-size:20px">${escapeHtml(clean(m.heading))}</h1>
${m.paragraphs.map(p).join("\n")}
${
  m.action
    ? `<p style="margin:24px 0"><a href="${escapeHtml(m.action.url)}" style="display:inline-block;background:#4338ca;color:#ffffff;text-decoration:none;font-weight:600;padding:12px 20px;border-radius:8px">${escapeHtml(clean(m.action.label))}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#475569">Or open this address: <a href="${escapeHtml(m.action.url)}" style="color:#4338ca;word-break:break-all">${escapeHtml(m.action.url)}</a></p>`
    : ""
}
${m.note ? `<p style="margin:0 0 16px;font-size:13px;color:#475569">${escapeHtml(clean(m.note))}</p>` : ""}
<hr style="border:none;border-top:1px solid #e2e8f0;margin:24px 0">
<p style="margin:0;font-size:12px;color:#64748b">${escapeHtml(clean(m.footer))}<br>${escapeHtml(m.product)} · <a href="${escapeHtml(m.publicUrl)}" style="color:#64748b">${escapeHtml(m.publicUrl)}</a></p>
</td></tr></table></td></tr></table></body></html>`;
  return { subject, text, html };
}
