import { EventEmitter } from "node:events";

// In-process event bus: the driver listens here when no Inngest server is configured.
const globalForBus = globalThis as unknown as { gpuforgeBus?: EventEmitter };
export const localBus: EventEmitter = (globalForBus.gpuforgeBus ??= new EventEmitter().setMaxListeners(100));
