-- Sign-in throttling gains a counter per account and address pair (`pair:<sha256>`), and remembers
-- when a pair last signed in successfully: an address that has signed in to an account before is
-- not held back by failures other addresses pile onto that account, so a stranger guessing at an
-- account cannot keep its owner out. The per-account counter stays, with a larger allowance, as the
-- defence against guessing spread over many addresses.
ALTER TABLE "sign_in_throttles" ADD COLUMN "succeeded_at" TIMESTAMPTZ(3);
ALTER TABLE "sign_in_throttles" DROP CONSTRAINT "sign_in_throttles_key_check";
ALTER TABLE "sign_in_throttles" ADD CONSTRAINT "sign_in_throttles_key_check"
    CHECK ("key" ~ '^(ip|email|pair):.' AND length("key") <= 320);
ALTER TABLE "sign_in_throttles" ADD CONSTRAINT "sign_in_throttles_succeeded_pair_check"
    CHECK ("succeeded_at" IS NULL OR "key" LIKE 'pair:%');
