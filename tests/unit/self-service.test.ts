import { describe, expect, it } from "vitest";
import { passwordProblem } from "@/lib/auth/password-policy";
import { hashRecoveryCode, looksLikeRecoveryCode, newRecoveryCodes } from "@/lib/auth/recovery-codes";
import { totpCode, totpStep, totpUri } from "@/lib/auth/totp";
import { depositLabel, depositTransition, newlyRefundedCents, CARD_DEPOSIT_STATUSES } from "@/lib/billing/card-deposit-lifecycle";
import { escapeHtml, renderMail } from "@/lib/mail/layout";
import { renderAccountMail } from "@/lib/mail/templates";

// RFC 6238 Appendix B: the reference secrets (ASCII "1234567890" repeated to 20, 32 and 64 bytes
// for SHA-1, SHA-256 and SHA-512), 8-digit codes, 30-second steps, and the table's times and codes.
const b32 = (ascii: string) => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const c of Buffer.from(ascii)) bits += c.toString(2).padStart(8, "0");
  let out = "";
  for (let i = 0; i < bits.length; i += 5) out += alphabet[parseInt(bits.slice(i, i + 5).padEnd(5, "0"), 2)];
  return out;
};
const SEEDS = {
  SHA1: b32("12345678901234567890"),
  SHA256: b32("12345678901234567890123456789012"),
  SHA512: b32("1234567890123456789012345678901234567890123456789012345678901234"),
};
const VECTORS: Array<[number, string, keyof typeof SEEDS]> = [
  [59, "94287082", "SHA1"],
  [59, "46119246", "SHA256"],
  [59, "90693936", "SHA512"],
  [1111111109, "07081804", "SHA1"],
  [1111111109, "68084774", "SHA256"],
  [1111111109, "25091201", "SHA512"],
  [1111111111, "14050471", "SHA1"],
  [1111111111, "67062674", "SHA256"],
  [1111111111, "99943326", "SHA512"],
  [1234567890, "89005924", "SHA1"],
  [1234567890, "91819424", "SHA256"],
  [1234567890, "93441116", "SHA512"],
  [2000000000, "69279037", "SHA1"],
  [2000000000, "90698825", "SHA256"],
  [2000000000, "38618901", "SHA512"],
  [20000000000, "65353130", "SHA1"],
  [20000000000, "77737706", "SHA256"],
  [20000000000, "47863826", "SHA512"],
];

describe("TOTP (RFC 6238)", () => {
  it.each(VECTORS)("at %i s the %s code of the reference secret is %s", (t, code, algorithm) => {
    expect(totpCode(SEEDS[algorithm], t * 1000, { algorithm, digits: 8 })).toBe(code);
    expect(totpStep(SEEDS[algorithm], code, t * 1000, { algorithm, digits: 8 })).toBe(Math.floor(t / 30));
  });

  it("accepts a code one step either side of now and no further, and answers the step it belongs to", () => {
    const secret = SEEDS.SHA1;
    const now = 1_700_000_015_000;
    const step = Math.floor(now / 30_000);
    expect(totpStep(secret, totpCode(secret, now - 30_000), now)).toBe(step - 1);
    expect(totpStep(secret, totpCode(secret, now), now)).toBe(step);
    expect(totpStep(secret, totpCode(secret, now + 30_000), now)).toBe(step + 1);
    expect(totpStep(secret, totpCode(secret, now - 60_000), now)).toBeNull();
    expect(totpStep(secret, totpCode(secret, now + 60_000), now)).toBeNull();
    for (const junk of ["", "12345", "1234567", "abcdef", "12 345"]) expect(totpStep(secret, junk, now)).toBeNull();
  });

  it("enrols authenticator apps with a standard otpauth:// URI", () => {
    const uri = new URL(totpUri(SEEDS.SHA1, "Forge Cloud", "ada@example.com"));
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(uri.searchParams.get("secret")).toBe(SEEDS.SHA1);
    expect(uri.searchParams.get("issuer")).toBe("Forge Cloud");
    expect(uri.searchParams.get("digits")).toBe("6");
    expect(uri.searchParams.get("period")).toBe("30");
    expect(uri.searchParams.get("algorithm")).toBe("SHA1");
  });
});

describe("recovery codes", () => {
  it("are ten distinct codes without look-alike characters, recognised however they are typed", () => {
    const codes = newRecoveryCodes();
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) {
      expect(c).toMatch(/^[a-hjkmnp-z2-9]{5}-[a-hjkmnp-z2-9]{5}$/);
      expect(looksLikeRecoveryCode(c.toUpperCase().replace("-", " "))).toBe(true);
      expect(hashRecoveryCode(c.toUpperCase())).toBe(hashRecoveryCode(c));
    }
    expect(looksLikeRecoveryCode("123456")).toBe(false);
  });
});

describe("new passwords", () => {
  const common = new Set(["password", "dragon", "iloveyou", "qwerty123456", "monkey"]);
  it.each([
    ["short", /At least 12/],
    ["qwerty123456", /most common/],
    ["QWERTY123456", /most common/],
    ["Password1234!!", /changed or added/],
    ["p@$$w0rdp@$$w0rd", /./],
    ["dragon2024dragon", null],
    ["iloveyouiloveyou", /repeats/],
    ["abcabcabcabc", /repeats/],
    ["qwertyuiopasdfgh", /keyboard/],
    ["1234567890123", /keyboard/],
    ["aaaaaaaaaaab", /different characters/],
    ["correct horse battery staple", null],
  ])("%s", (password, problem) => {
    const found = passwordProblem(password, common);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });

  it("refuses a password built from the person's email or company", () => {
    expect(passwordProblem("adalovelace2026", common, { email: "adalovelace@example.com" })).toMatch(/email address or company/);
    expect(passwordProblem("AcmeResearch-99", common, { words: ["Acme Research"] })).toMatch(/email address or company/);
    expect(passwordProblem("acme and a long story", common, { words: ["Acme Research"] })).toBeNull();
  });
});

describe("card deposits' state machine", () => {
  it("credits any deposit not yet paid, once; expiry and failure only before a payment", () => {
    for (const from of CARD_DEPOSIT_STATUSES) {
      expect(depositTransition(from, { kind: "paid" })).toEqual(
        from === "paid" ? { change: false, why: "already credited" } : { change: true, to: "paid" },
      );
      expect(depositTransition(from, { kind: "expired" }).change).toBe(from === "open");
      expect(depositTransition(from, { kind: "payment_pending" }).change).toBe(from === "open");
      expect(depositTransition(from, { kind: "async_failed" }).change).toBe(from === "open" || from === "processing");
    }
  });

  it("takes off only what Stripe's cumulative refund adds, never more than was paid", () => {
    expect(newlyRefundedCents(5000, 0, 1000)).toBe(1000);
    expect(newlyRefundedCents(5000, 1000, 1000)).toBe(0); // a replay
    expect(newlyRefundedCents(5000, 1000, 500)).toBe(0); // an older event
    expect(newlyRefundedCents(5000, 1000, 9000)).toBe(4000); // never past the payment
    expect(depositLabel("1a2b3c4d-0000-4000-8000-000000000000")).toBe("DEP-1A2B3C4D");
  });
});

describe("account mail", () => {
  const site = { product: "Forge Cloud", publicUrl: "https://console.forge.test" };
  it("says the same in text and HTML, escapes what visitors typed, and keeps headers on one line", () => {
    const m = renderAccountMail(site, {
      kind: "verify_email",
      company: '<script>alert(1)</script> & "Co"\r\nBcc: x@evil.test',
      link: "https://console.forge.test/signup/verify?token=abc",
      expiresHours: 48,
    });
    expect(m.subject).toBe("Confirm your email address · Forge Cloud");
    expect(m.text).toContain("https://console.forge.test/signup/verify?token=abc");
    expect(m.html).toContain('href="https://console.forge.test/signup/verify?token=abc"');
    expect(m.html).not.toContain("<script>");
    expect(m.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;");
    expect(m.text).toContain("expires in 48 hours");
    const injected = renderMail({ ...site, subject: "Hi\r\nBcc: x@evil.test", heading: "h", paragraphs: [], footer: "f" });
    expect(injected.subject).not.toMatch(/[\r\n]/);
    expect(escapeHtml(`<a href="x">'`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;");
  });

  it("names amounts, balances and where to act in receipts and warnings", () => {
    const r = renderAccountMail(site, {
      kind: "deposit_receipt",
      amountCents: 2500,
      currency: "usd",
      balanceCents: 7500,
      reference: "DEP-1A2B3C4D",
      at: new Date("2026-12-01T10:00:00Z"),
    });
    expect(r.subject).toBe("Receipt: $25.00 added to your balance · Forge Cloud");
    expect(r.text).toContain("reference DEP-1A2B3C4D");
    expect(r.text).toContain("Your balance is now $75.00");
    const low = renderAccountMail(site, { kind: "low_balance", balanceCents: 120, lastsFor: "3 h", empty: false });
    expect(low.text).toContain("about 3 h at the current spend");
    expect(low.text).toContain("https://console.forge.test/dashboard/billing#add-funds");
  });
});
