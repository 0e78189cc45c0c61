import net, { type AddressInfo } from "node:net";

/**
 * A TCP relay to PostgreSQL (the test database's address) in this process, for tests of how a
 * client copes with its connection: `silent` stops every byte both ways with no reset or close
 * (a firewall dropping its state).
 */
export async function databaseRelay(databaseUrl: string) {
  const target = new URL(databaseUrl);
  const state = { silent: false };
  const relay = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    client.on("data", (d) => !state.silent && upstream.write(d));
    upstream.on("data", (d) => !state.silent && client.write(d));
    for (const s of [client, upstream]) s.on("error", () => {});
  });
  relay.on("error", () => {});
  await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
  const url = new URL(target.toString());
  url.hostname = "127.0.0.1";
  url.port = String((relay.address() as AddressInfo).port);
  return {
    url: url.toString(),
    goSilent: () => (state.silent = true),
    close: () => new Promise<void>((r) => relay.close(() => r())),
  };
}
