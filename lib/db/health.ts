import "server-only";
import { pool } from "./client";

export async function checkDatabase(timeoutMs = 2_000): Promise<boolean> {
  try {
    await Promise.race([pool().query("SELECT 1"), new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), timeoutMs))]);
    return true;
  } catch {
    return false;
  }
}
