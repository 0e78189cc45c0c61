import "server-only";
import { backgroundLockPool } from "@/lib/db/client";
import { env, inngestConfigured } from "@/lib/env";
import { logger } from "@/lib/logger";
import { BACKGROUND_EVENTS_CHANNEL } from "./cross-process";
import { InProcessDriver } from "./driver";
import { backgroundJobs } from "./registry";

const globalForDriver = globalThis as unknown as { gpuforgeDriver?: InProcessDriver };

export async function startBackgroundDriver(): Promise<InProcessDriver | undefined> {
  const e = env();
  if (e.BACKGROUND_DRIVER === "off") return undefined;
  if (inngestConfigured(e)) {
    logger.info("background work runs on Inngest (/api/inngest)");
    return undefined;
  }
  if (!e.DATABASE_URL) {
    logger.warn("no DATABASE_URL: in-process background driver not started");
    return undefined;
  }
  if (!globalForDriver.gpuforgeDriver) {
    // the jobs' locks live on connections of their own, so jobs firing together never starve their own work
    globalForDriver.gpuforgeDriver = new InProcessDriver(backgroundJobs, backgroundLockPool(backgroundJobs.length), undefined, {
      listenChannel: BACKGROUND_EVENTS_CHANNEL,
    });
    globalForDriver.gpuforgeDriver.start();
  }
  return globalForDriver.gpuforgeDriver;
}
