// A process whose last awaited step is stopping its notification listener (as disconnectDb's is):
// prints "stopped" after it. tests/integration/listen.test.ts runs it and expects exit code 0 with
// that line, where a goodbye awaited on the unreferenced listening socket let Node exit mid-await.
import { ChannelListener, stopAllListeners } from "@/lib/db/listen";

const listener = new ChannelListener("listener_exit_probe", { onNotify: () => {}, onLost: () => {} });
listener.start();
for (let i = 0; i < 1_000 && !listener.live; i++) await new Promise((r) => setTimeout(r, 10));
if (!listener.live) throw new Error("the listener never connected");
await stopAllListeners();
console.log("stopped");
