import { z } from "zod";
import { SIGN_IN_METHODS, SIGN_IN_OUTCOMES } from "./vocabulary";

/** One attempt to sign in to an account, as its history lists it. */
export const signInEventSchema = z
  .object({
    id: z.string(),
    outcome: z.enum(SIGN_IN_OUTCOMES),
    method: z.enum(SIGN_IN_METHODS).nullable(),
    address: z.string(),
    user_agent: z.string().nullable(),
    at: z.string(),
  })
  .meta({ id: "SignInEvent" });
