// Closed lists of the accounts domain (pure), registered in lib/db/closed-columns.ts.

export const TOKEN_PURPOSES = ["verify_email", "reset_password", "discard_signup"] as const;
export type TokenPurpose = (typeof TOKEN_PURPOSES)[number];

export const SIGN_IN_OUTCOMES = ["succeeded", "wrong_password", "wrong_code", "throttled", "unverified", "disabled"] as const;
export const SIGN_IN_METHODS = ["password", "totp", "recovery_code"] as const;
export type SignInOutcome = (typeof SIGN_IN_OUTCOMES)[number];
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];
