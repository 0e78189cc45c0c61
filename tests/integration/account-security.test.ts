import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeOwnPassword } from "@/lib/accounts/change-password";
import { listSignIns } from "@/lib/accounts/sign-in-history";
import { signInWithPassword, signInWithSecondFactor } from "@/lib/accounts/sign-in";
import {
  beginTwoFactorEnrolment,
  confirmTwoFactorEnrolment,
  disableTwoFactor,
  regenerateRecoveryCodes,
  resetTwoFactor,
} from "@/lib/accounts/two-factor";
import { deliverNotifications } from "@/lib/alerts/notification-outbox";
import { systemActor, type Principal } from "@/lib/auth/principal";
import { SECOND_FACTOR_POLICY } from "@/lib/auth/sign-in-throttle";
import { totpCode } from "@/lib/auth/totp";
import { db } from "@/lib/db/client";
import { updateSettings } from "@/lib/settings/update-settings";
import { forgetTwoFactorPolicy, principalForUserId } from "@/lib/users/principal-for-user";
import { actorFor, makeTenant, makeUser } from "../support/fixtures";
import { codeAndFieldOf, codeOf } from "../support/outcomes";
import { startSmtpServer, type Inbox } from "../support/smtp";
import { takeOutboxTurn } from "../support/test-turns";

// Account security through the services: TOTP two-factor sign-in (enrol with a QR code, confirm,
// sign in in two steps, codes single-use, recovery codes, throttling), operators requiring it,
// resets by admins, changing a password, and the sign-in history that records it all.

let inbox: Inbox;
let n = Math.floor(Math.random() * 60_000);
/** makeUser's password */
const PASSWORD = "a-long-test-password";
const place = () => ((n = (n + 1) % 62_500), { address: `198.18.${Math.floor(n / 250)}.${n % 250}`, userAgent: "Mozilla/5.0 vitest" });

let releaseOutbox: (() => Promise<void>) | undefined;
beforeAll(async () => {
  releaseOutbox = await takeOutboxTurn();
  inbox = await startSmtpServer();
  Object.assign(process.env, { SMTP_URL: inbox.url, NEXTAUTH_URL: "https://console.forge.test" });
  // another file that delivers notifications may hold the turn for its whole run
}, 600_000);
afterAll(async () => {
  await inbox.close();
  await releaseOutbox?.();
});

const principalOf = (u: { id: string; email: string; role: string; tenantId: string | null }): Principal =>
  u.role === "operator"
    ? { kind: "operator", userId: u.id, label: u.email }
    : { kind: "tenant", tenantId: u.tenantId!, role: u.role as "tenant_admin", userId: u.id, label: u.email };

/** A user with two-factor sign-in on: their secret and recovery codes. */
async function enrolled(role: "operator" | "tenant_admin" | "tenant_member" = "tenant_admin", tenantId?: string) {
  const user = await makeUser(role, role === "operator" ? undefined : (tenantId ?? (await makeTenant()).id));
  const actor = actorFor(principalOf(user));
  const { secret, uri, qrSvg } = await beginTwoFactorEnrolment(actor);
  expect(uri).toContain(`secret=${secret}`);
  expect(qrSvg).toMatch(/^<svg[^>]*viewBox/);
  const { recoveryCodes } = await confirmTwoFactorEnrolment(actor, { code: totpCode(secret, Date.now() - 30_000), password: PASSWORD });
  return { user, actor, secret, recoveryCodes };
}

async function challengeFor(email: string, password: string, where = place()) {
  const r = await signInWithPassword(email, password, where);
  if (r.ok || r.reason !== "second_factor") throw new Error(`expected a second-factor challenge, got ${JSON.stringify(r)}`);
  return r.challenge;
}

describe("two-factor sign-in", () => {
  it("enrols with a code from the device, stores the secret sealed and the recovery codes hashed, and says so by mail", async () => {
    const { user, secret, recoveryCodes } = await enrolled();
    expect(recoveryCodes).toHaveLength(10);
    const row = await db().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.totpEnabledAt).not.toBeNull();
    expect(row.totpSecretCiphertext).toMatch(/^v1:/);
    expect(row.totpSecretCiphertext).not.toContain(secret);
    expect(row.totpPendingCiphertext).toBeNull();
    const stored = await db().userRecoveryCode.findMany({ where: { userId: user.id } });
    expect(stored).toHaveLength(10);
    expect(stored.map((c) => c.codeHash)).not.toContain(recoveryCodes[0]);
    await deliverNotifications();
    const mail = await inbox.waitFor(user.email, (m) => /turned on/.test(m.subject ?? ""));
    expect(mail.text).toContain("signing in asks for a code from your authenticator app");
  });

  it("refuses a wrong first code and an expired set-up", async () => {
    const user = await makeUser("operator");
    const actor = actorFor(principalOf(user));
    const { secret } = await beginTwoFactorEnrolment(actor);
    expect(await codeAndFieldOf(confirmTwoFactorEnrolment(actor, { code: "000000", password: PASSWORD }))).toBe("validation_failed:code");
    await db().user.update({ where: { id: user.id }, data: { totpPendingAt: new Date(Date.now() - 16 * 60_000) } });
    expect(await codeAndFieldOf(confirmTwoFactorEnrolment(actor, { code: totpCode(secret, Date.now()), password: PASSWORD }))).toBe(
      "validation_failed:code",
    );
    expect((await db().user.findUniqueOrThrow({ where: { id: user.id } })).totpEnabledAt).toBeNull();
  });

  it("enrols only with the account's password beside the code (a session alone cannot put its own device in)", async () => {
    const user = await makeUser("tenant_admin", (await makeTenant()).id);
    const actor = actorFor(principalOf(user));
    const { secret } = await beginTwoFactorEnrolment(actor);
    expect(await codeAndFieldOf(confirmTwoFactorEnrolment(actor, { code: totpCode(secret, Date.now()), password: "not-it-at-all" }))).toBe(
      "validation_failed:password",
    );
    expect((await db().user.findUniqueOrThrow({ where: { id: user.id } })).totpEnabledAt).toBeNull();
    await confirmTwoFactorEnrolment(actor, { code: totpCode(secret, Date.now()), password: PASSWORD });
    expect((await db().user.findUniqueOrThrow({ where: { id: user.id } })).totpEnabledAt).not.toBeNull();
  });

  it("throttles codes typed in the settings (new recovery codes, turning off) on the account's second-factor counter", async () => {
    const { user, actor, secret } = await enrolled();
    for (let i = 0; i <= SECOND_FACTOR_POLICY.free; i++)
      expect(await codeAndFieldOf(regenerateRecoveryCodes(actor, "000000"))).toBe("validation_failed:code");
    // past the free tries the counter waits: even the right code is refused (429) until it has
    expect(await codeOf(regenerateRecoveryCodes(actor, totpCode(secret, Date.now())))).toBe("rate_limited");
    expect(await codeOf(disableTwoFactor(actor, { password: user.password, code: totpCode(secret, Date.now()) }))).toBe("rate_limited");
    // and it is the counter sign-in's second step uses
    const r = await signInWithSecondFactor(await challengeFor(user.email, user.password), totpCode(secret, Date.now()), place());
    expect(r).toMatchObject({ ok: false, reason: "throttled" });
  });

  it("asks for a code after the password; a code signs in once, a recovery code once, a stale challenge never", async () => {
    const { user, secret, recoveryCodes } = await enrolled();
    const challenge = await challengeFor(user.email, user.password);
    expect(await signInWithSecondFactor(challenge, "123456", place())).toMatchObject({ ok: false, reason: "invalid" });
    const code = totpCode(secret, Date.now());
    expect(await signInWithSecondFactor(challenge, code, place())).toMatchObject({ ok: true, twoFactor: true, user: { id: user.id } });
    // the same code again (replayed, or seen over a shoulder) does not sign in
    expect(await signInWithSecondFactor(await challengeFor(user.email, user.password), code, place())).toMatchObject({
      ok: false,
      reason: "invalid",
    });
    const rc = recoveryCodes[3]!.toUpperCase();
    expect(await signInWithSecondFactor(await challengeFor(user.email, user.password), rc, place())).toMatchObject({ ok: true });
    expect(await signInWithSecondFactor(await challengeFor(user.email, user.password), rc, place())).toMatchObject({
      ok: false,
      reason: "invalid",
    });
    // a challenge from before a password change is void
    const old = await challengeFor(user.email, user.password);
    await db().user.update({ where: { id: user.id }, data: { sessionVersion: { increment: 1 } } });
    expect(await signInWithSecondFactor(old, totpCode(secret, Date.now() + 30_000), place())).toMatchObject({
      ok: false,
      reason: "challenge_expired",
    });
    expect(await signInWithSecondFactor("forged.challenge", "123456", place())).toMatchObject({ ok: false, reason: "challenge_expired" });
  });

  it("throttles guessed codes per account, from any number of places, and the owner's history shows them", async () => {
    const { user, secret } = await enrolled();
    const challenge = await challengeFor(user.email, user.password);
    const guesses = await Promise.all(Array.from({ length: 12 }, (_, i) => signInWithSecondFactor(challenge, String(100000 + i), place())));
    expect(guesses.filter((g) => !g.ok && g.reason === "invalid")).toHaveLength(SECOND_FACTOR_POLICY.free + 1);
    expect(guesses.filter((g) => !g.ok && g.reason === "throttled")).toHaveLength(12 - SECOND_FACTOR_POLICY.free - 1);
    // even the right code waits out the back-off
    expect(await signInWithSecondFactor(challenge, totpCode(secret, Date.now()), place())).toMatchObject({
      ok: false,
      reason: "throttled",
    });
    const history = await listSignIns(principalOf(user), user.id, { limit: 50 });
    const outcomes = history.data.map((e) => e.outcome);
    expect(outcomes.filter((o) => o === "wrong_code")).toHaveLength(SECOND_FACTOR_POLICY.free + 1);
    expect(outcomes).toContain("throttled");
    expect(history.data[0]).toMatchObject({ user_agent: "Mozilla/5.0 vitest", address: expect.stringMatching(/^198\.18\./) });
  });

  it("turns off with the password and a code, but not where operators require it; new recovery codes replace the old", async () => {
    const { user, actor, secret, recoveryCodes } = await enrolled();
    const fresh = await regenerateRecoveryCodes(actor, recoveryCodes[0]!);
    expect(fresh.recoveryCodes).toHaveLength(10);
    expect(await signInWithSecondFactor(await challengeFor(user.email, user.password), recoveryCodes[1]!, place())).toMatchObject({
      ok: false,
    });
    await updateSettings(systemActor, { "security.two_factor": { operators: false, tenant_admins: true } });
    try {
      expect(await codeOf(disableTwoFactor(actor, { password: user.password, code: totpCode(secret, Date.now()) }))).toBe("forbidden");
    } finally {
      await updateSettings(systemActor, { "security.two_factor": null });
    }
    expect(await codeAndFieldOf(disableTwoFactor(actor, { password: "not-the-password", code: totpCode(secret, Date.now()) }))).toBe(
      "validation_failed:password",
    );
    await disableTwoFactor(actor, { password: user.password, code: fresh.recoveryCodes[0]! });
    expect(await signInWithPassword(user.email, user.password, place())).toMatchObject({ ok: true, twoFactor: false });
    expect(await db().userRecoveryCode.count({ where: { userId: user.id } })).toBe(0);
  });

  it("when operators require it, a session without it can only enrol; enrolling opens everything again", async () => {
    const operator = await makeUser("operator");
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const member = await makeUser("tenant_member", t.id);
    await updateSettings(systemActor, { "security.two_factor": { operators: true, tenant_admins: true } });
    forgetTwoFactorPolicy();
    try {
      expect(await principalForUserId(operator.id, 0)).toMatchObject({ kind: "operator", mustEnrolTwoFactor: true });
      expect(await principalForUserId(admin.id, 0)).toMatchObject({ kind: "tenant", mustEnrolTwoFactor: true });
      expect(await principalForUserId(member.id, 0)).not.toHaveProperty("mustEnrolTwoFactor");
      const actor = actorFor(principalOf(admin));
      const { secret } = await beginTwoFactorEnrolment(actor);
      await confirmTwoFactorEnrolment(actor, { code: totpCode(secret, Date.now()), password: PASSWORD });
      expect(await principalForUserId(admin.id, 0)).not.toHaveProperty("mustEnrolTwoFactor");
    } finally {
      await updateSettings(systemActor, { "security.two_factor": null });
      forgetTwoFactorPolicy();
    }
  });

  it("a tenant admin resets a member's lost device (their sessions end); not another tenant's, not their own", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const { user: member } = await enrolled("tenant_member", t.id);
    const outsider = await makeUser("tenant_admin", (await makeTenant()).id);
    expect(await codeOf(resetTwoFactor(actorFor(principalOf(outsider)), member.id))).toBe("not_found");
    expect(await codeOf(resetTwoFactor(actorFor(principalOf(member)), member.id))).toBe("forbidden");
    const before = await db().user.findUniqueOrThrow({ where: { id: member.id } });
    await resetTwoFactor(actorFor(principalOf(admin)), member.id);
    const after = await db().user.findUniqueOrThrow({ where: { id: member.id } });
    expect(after).toMatchObject({ totpEnabledAt: null, totpSecretCiphertext: null, sessionVersion: before.sessionVersion + 1 });
    expect(await db().auditLog.count({ where: { action: "user.two_factor_reset", targetId: member.id } })).toBe(1);
    await deliverNotifications();
    const mail = await inbox.waitFor(member.email, (m) => /was reset/.test(m.subject ?? ""));
    expect(mail.text).toContain(admin.email);
  });
});

describe("passwords and sign-in history", () => {
  it("changing a password asks for the current one, ends every session and tells the user", async () => {
    const user = await makeUser("tenant_member", (await makeTenant()).id);
    const actor = actorFor(principalOf(user));
    const where = place();
    expect(
      await codeAndFieldOf(changeOwnPassword(actor, { current_password: "wrong one here", password: "a fresh long passphrase" }, where)),
    ).toBe("validation_failed:current_password");
    expect(await codeAndFieldOf(changeOwnPassword(actor, { current_password: user.password, password: "qwerty123456" }, where))).toBe(
      "validation_failed:password",
    );
    await changeOwnPassword(actor, { current_password: user.password, password: "a fresh long passphrase" }, where);
    expect(await principalForUserId(user.id, 0)).toBeNull();
    expect(await signInWithPassword(user.email, "a fresh long passphrase", place())).toMatchObject({ ok: true });
    await deliverNotifications();
    expect((await inbox.waitFor(user.email, (m) => /password was changed/.test(m.subject ?? ""))).text).toContain(where.address);
  });

  it("mails a sign-in from a new place (not the first sign-in ever), and records every attempt", async () => {
    const user = await makeUser("operator");
    const home = place();
    expect(await signInWithPassword(user.email, user.password, home)).toMatchObject({ ok: true });
    expect(await signInWithPassword(user.email, "not the password", home)).toMatchObject({ ok: false, reason: "invalid" });
    expect(await signInWithPassword(user.email, user.password, home)).toMatchObject({ ok: true });
    await deliverNotifications();
    expect(inbox.to(user.email).filter((m) => /New sign-in/.test(m.subject ?? ""))).toHaveLength(0);
    const away = place();
    expect(await signInWithPassword(user.email, user.password, away)).toMatchObject({ ok: true });
    await deliverNotifications();
    const mail = await inbox.waitFor(user.email, (m) => /New sign-in/.test(m.subject ?? ""));
    expect(mail.text).toContain(away.address);
    expect(mail.text).toContain("https://console.forge.test/admin/account#sign-ins");
    const history = await listSignIns(principalOf(user), user.id, { limit: 10 });
    expect(history.data.map((e) => [e.outcome, e.method])).toEqual([
      ["succeeded", "password"],
      ["succeeded", "password"],
      ["wrong_password", null],
      ["succeeded", "password"],
    ]);
  });

  it("shows a user's history to themselves, their tenant's admins and operators, and to nobody else", async () => {
    const t = await makeTenant();
    const member = await makeUser("tenant_member", t.id);
    const colleague = await makeUser("tenant_member", t.id);
    const admin = await makeUser("tenant_admin", t.id);
    const outsider = await makeUser("tenant_admin", (await makeTenant()).id);
    await signInWithPassword(member.email, member.password, place());
    expect((await listSignIns(principalOf(member), member.id, { limit: 5 })).data).toHaveLength(1);
    expect((await listSignIns(principalOf(admin), member.id, { limit: 5 })).data).toHaveLength(1);
    expect((await listSignIns({ kind: "operator", label: "op" }, member.id, { limit: 5 })).data).toHaveLength(1);
    expect(await codeOf(listSignIns(principalOf(colleague), member.id, { limit: 5 }))).toBe("forbidden");
    expect(await codeOf(listSignIns(principalOf(outsider), member.id, { limit: 5 }))).toBe("not_found");
  });
});
