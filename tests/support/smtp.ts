import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";

// A real SMTP server on a free loopback port (the smtp-server package speaks the protocol as any
// mail server does), keeping every message it accepts, parsed (headers, text and HTML parts,
// quoted-printable and all) by mailparser. Tests read what a recipient would read.

export interface Inbox {
  url: string;
  mails: ParsedMail[];
  /** mail to `to` (newest first) matching `match`, waiting up to `timeoutMs` for it to arrive */
  waitFor(to: string, match?: (m: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>;
  to(address: string): ParsedMail[];
  close(): Promise<void>;
}

export async function startSmtpServer(): Promise<Inbox> {
  const mails: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, cb) {
      simpleParser(stream)
        .then((m) => {
          mails.push(m);
          cb();
        })
        .catch((e: Error) => cb(e));
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.server.address() as AddressInfo).port;
  const addressed = (m: ParsedMail, address: string) =>
    [m.to].flat().some((t) => t?.value.some((v) => v.address?.toLowerCase() === address.toLowerCase()));
  const to = (address: string) => mails.filter((m) => addressed(m, address)).reverse();
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    to,
    async waitFor(address, match = () => true, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = to(address).find(match);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no mail to ${address} arrived in ${timeoutMs} ms (${mails.length} mails in all)`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The first link in a mail's text that points at `path` on the site. */
export function linkIn(mail: ParsedMail, path: string): string {
  const m = new RegExp(`https?://[^\\s"<>]+${path.replace(/[/?]/g, "\\$&")}[^\\s"<>]*`).exec(mail.text ?? "");
  if (!m) throw new Error(`no link to ${path} in mail "${mail.subject}":\n${mail.text}`);
  return m[0];
}
