import { describe, expect, it } from "vitest";
import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from "@/lib/api-keys/key-format";

describe("API key format", () => {
  it("generates gf_-prefixed base62 keys of fixed length that pass the format check", () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      expect(key).toMatch(/^gf_[0-9A-Za-z]{43}$/);
      expect(isWellFormedApiKey(key)).toBe(true);
    }
  });

  it("never repeats a key", () => {
    const keys = new Set(Array.from({ length: 5_000 }, generateApiKey));
    expect(keys.size).toBe(5_000);
  });

  it("uses every base62 character with roughly equal frequency (no modulo bias)", () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) for (const ch of generateApiKey().slice(3)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (2_000 * 43) / 62;
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.2);
  });

  it("hashes with SHA-256 to 64 hex characters, deterministically", () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(hashApiKey(key)).not.toBe(hashApiKey(generateApiKey()));
    // the SHA-256 of "abc" is a published test vector
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("shows a 12-character prefix", () => {
    const key = generateApiKey();
    expect(displayPrefix(key)).toHaveLength(12);
    expect(key.startsWith(displayPrefix(key))).toBe(true);
  });

  it.each(["", "gf_", "gf_short", "xx_" + "a".repeat(43), "gf_" + "a".repeat(42) + "!", "gf_" + "a".repeat(44)])(
    "rejects malformed key %j",
    (k) => expect(isWellFormedApiKey(k)).toBe(false),
  );
});
