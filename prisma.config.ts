import { defineConfig } from "prisma/config";

// The CLI only needs a URL for commands that talk to a database; `prisma generate` does not.
// Our own runner (scripts/migrate.ts) applies migrations where Prisma's engine can't be fetched.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres:postgres@127.0.0.1:5432/gpuforge" },
});
