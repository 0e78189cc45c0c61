import "server-only";
import { consumeAddressLimit } from "@/lib/accounts/address-limit";
import { assertAcceptablePassword } from "@/lib/accounts/check-password";
import { issueAccountToken } from "@/lib/accounts/account-tokens";
import { hashPassword } from "@/lib/auth/password";
import { systemActorFor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, type Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { forbidden, isUniqueViolation } from "@/lib/errors";
import { queueAccountMail, wakeMailDeliverer } from "@/lib/mail/queue-account-mail";
import { publicUrl } from "@/lib/platform/public-url";
import { effectiveSettings } from "@/lib/settings/settings";
import type { SignupInput } from "./schemas";

const actor = systemActorFor("self-service sign-up");
/** Sign-ups one address may be given an hour, counted in the database (every process shares it): the same for addresses with and without an account. */
const SIGNUPS_PER_EMAIL_PER_HOUR = 5;

/**
 * A stranger signs up: a prepaid tenant with the operator's defaults (quota, best priority, burst,
 * limits), its admin user, a zero balance, and a verification mail. Until the address is verified
 * the account cannot sign in (and so cannot spend), and it is removed at its expiry.
 *
 * The answer is the same whether or not the address already has an account, and so is the work
 * done before answering (the password is checked and hashed, one mail is queued in a transaction):
 * an existing account's owner gets a "someone tried to sign up with your address" mail instead,
 * and nothing about the account changes. Two sign-ups racing with one new address make one account
 * (the users' unique email decides; the other becomes the "someone tried" mail).
 */
export async function signUp(input: SignupInput): Promise<void> {
  const settings = await effectiveSettings();
  if (!settings.signup.enabled) throw forbidden("Self-service sign-up is turned off on this installation");
  await consumeAddressLimit(
    "signup",
    input.email,
    SIGNUPS_PER_EMAIL_PER_HOUR,
    3600,
    "Too many sign-ups with this address; try again later",
  );
  await assertAcceptablePassword(input.password, { email: input.email, words: [input.company] });
  const passwordHash = await hashPassword(input.password);
  const existing = await db().user.findUnique({ where: { email: input.email }, select: { id: true } });
  // a unique violation is either the address (another sign-up won the race: tell its owner) or the
  // tenant's name (another company of that name signed up meanwhile: take the next free name)
  for (let attempt = 1; !existing; attempt++) {
    try {
      await db().$transaction((tx) => createSignup(tx, input, passwordHash, settings.signup.defaults), {
        timeout: 15_000,
        maxWait: 15_000,
      });
      await wakeMailDeliverer();
      return;
    } catch (e) {
      if (!isUniqueViolation(e) || attempt >= 5) throw e;
      if (await db().user.count({ where: { email: input.email } })) break;
    }
  }
  await db().$transaction((tx) => mailExistingAccount(tx, input.email), { timeout: 15_000, maxWait: 15_000 });
  await wakeMailDeliverer();
}

const verifyTtlMs = () => env().SIGNUP_VERIFY_HOURS * 3_600_000;

async function createSignup(
  tx: Tx,
  input: SignupInput,
  passwordHash: string,
  d: Awaited<ReturnType<typeof effectiveSettings>>["signup"]["defaults"],
) {
  const expiresAt = new Date(Date.now() + verifyTtlMs());
  const tenant = await tx.tenant.create({
    data: {
      name: await freeTenantName(tx, input.company),
      origin: "signup",
      signupExpiresAt: expiresAt,
      billingMode: "prepaid",
      billingEmail: input.email,
      gpuQuota: d.gpu_quota,
      maxPriority: d.max_priority,
      burstEnabled: d.burst_enabled,
      // the operator's default turns it on: that is its allowance
      burstAllowed: d.burst_enabled,
      burstMaxPriceCentsPerGpuHour: d.burst_max_price_cents_per_gpu_hour,
      maxPods: d.max_pods,
      maxReservationHours: d.max_reservation_hours,
      maxReservations: d.max_reservations,
    },
    select: { id: true, name: true },
  });
  // always a tenant admin of its own new tenant, whatever was sent: a sign-up never has operator powers
  const user = await tx.user.create({
    data: { email: input.email, name: input.company, role: "tenant_admin", tenantId: tenant.id, passwordHash, emailVerifiedAt: null },
    select: { id: true },
  });
  const token = await issueAccountToken(tx, user.id, "verify_email", verifyTtlMs());
  const link = publicUrl(`/signup/verify?token=${token}`);
  await queueAccountMail(
    [
      {
        to: input.email,
        userId: user.id,
        tenantId: tenant.id,
        data: { kind: "verify_email", company: tenant.name, link, expiresHours: env().SIGNUP_VERIFY_HOURS },
        secretLinks: [link],
      },
    ],
    tx,
  );
  await recordAudit(tx, actor, {
    action: "tenant.signed_up",
    targetType: "tenant",
    targetId: tenant.id,
    tenantId: tenant.id,
    details: { name: tenant.name, admin: input.email, expires_at: expiresAt.toISOString(), defaults: d },
  });
}

/** The company's name, or with a number after it when another tenant has it (tenant names are unique; parallel sign-ups retry). */
async function freeTenantName(tx: Tx, company: string): Promise<string> {
  const taken = new Set(
    (await tx.tenant.findMany({ where: { name: { startsWith: company, mode: "insensitive" } }, select: { name: true }, take: 1000 })).map(
      (t) => t.name.toLowerCase(),
    ),
  );
  if (!taken.has(company.toLowerCase())) return company;
  for (let n = 2; ; n++) {
    const name = `${company.slice(0, 92)} (${n})`;
    if (!taken.has(name.toLowerCase())) return name;
  }
}

/**
 * The address has an account: its owner is told (and, if it is an unconfirmed sign-up, may confirm
 * it by choosing its password, or discard it). Nothing else changes.
 */
async function mailExistingAccount(tx: Tx, email: string) {
  const user = await tx.user.findUniqueOrThrow({
    where: { email },
    select: { id: true, tenantId: true, emailVerifiedAt: true, createdAt: true, tenant: { select: { name: true, signupExpiresAt: true } } },
  });
  const pending = user.emailVerifiedAt === null && user.tenant?.signupExpiresAt ? user.tenant : null;
  if (!pending) {
    await queueAccountMail([{ to: email, userId: user.id, tenantId: user.tenantId, data: { kind: "signup_exists", pending: null } }], tx);
    return;
  }
  const ttl = Math.max(60_000, pending.signupExpiresAt!.getTime() - Date.now());
  // confirming here means choosing the password: the pending sign-up's password was chosen by whoever
  // made it, perhaps not the address's owner, and must not be what the owner's confirmation keeps
  // (a reset link confirms the address too: lib/accounts/password-reset.ts)
  const confirmLink = publicUrl(`/password-reset/confirm?token=${await issueAccountToken(tx, user.id, "reset_password", ttl)}`);
  const discardLink = publicUrl(`/signup/discard?token=${await issueAccountToken(tx, user.id, "discard_signup", ttl)}`);
  await queueAccountMail(
    [
      {
        to: email,
        userId: user.id,
        tenantId: user.tenantId,
        data: {
          kind: "signup_exists",
          pending: { company: pending.name, createdAt: user.createdAt, expiresAt: pending.signupExpiresAt!, confirmLink, discardLink },
        },
        secretLinks: [confirmLink, discardLink],
      },
    ],
    tx,
  );
}
