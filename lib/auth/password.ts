import { hash, verify } from "@node-rs/argon2";

// Argon2id with OWASP's recommended minimum parameters (19 MiB, 2 passes). Verification of an
// unknown email still runs against a real hash, so timing does not reveal which emails exist.
const OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
export const MIN_PASSWORD_LENGTH = 12;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

let dummyHash: Promise<string> | undefined;

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (!passwordHash) {
    dummyHash ??= hashPassword("gpuforge-timing-equaliser");
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}
