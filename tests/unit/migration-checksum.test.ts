import { describe, expect, it } from "vitest";
import { checksumOf, matchesChecksum, readMigrations } from "@/lib/db/migrations";
import path from "node:path";

describe("migration checksums", () => {
  it("is the SHA-256 hex of the script, as Prisma records it", () => {
    expect(checksumOf("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("accepts the same script with other line endings, rejects any other change", () => {
    const lf = "CREATE TABLE a (id int);\nCREATE TABLE b (id int);\n";
    const crlf = lf.replace(/\n/g, "\r\n");
    expect(matchesChecksum(crlf, checksumOf(lf))).toBe(true);
    expect(matchesChecksum(lf, checksumOf(crlf))).toBe(true);
    expect(matchesChecksum(lf.replace("b", "c"), checksumOf(lf))).toBe(false);
  });

  it("reads the repository's migrations in timestamp order with Prisma's folder layout", async () => {
    const migrations = await readMigrations(path.resolve("prisma/migrations"));
    expect(migrations.length).toBeGreaterThan(0);
    const names = migrations.map((m) => m.name);
    expect(names).toEqual([...names].sort());
    for (const m of migrations) {
      expect(m.name).toMatch(/^\d{14}_[a-z0-9_]+$/);
      expect(m.checksum).toBe(checksumOf(m.sql));
    }
  });
});
