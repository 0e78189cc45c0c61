import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";

// Each simulated node has a loopback address of its own (127.x.y.z): what it registers, and where
// its replicas' model servers and its pods' ports listen. Node addresses are unique in the fleet
// (the database refuses a second node with one), so these are handed out in order from 127.0.0.0/8
// and never derived from a hash: a hash of 10,000 hostnames into 16.6 million addresses collides in
// almost every run (the birthday bound). The allocation is kept in the simulator's state directory,
// so a hostname keeps its address when the simulator starts again, and every simulator that shares
// the directory (the browser walks' fleets, one after another, on one database) hands out
// addresses nobody holds. Keys name the cluster as well as the hostname: two clusters' nodes never
// share one, even where their hostnames look alike.

/** The network every simulated node's address is in: a deployment the simulator plays lists it in NODE_ADDRESS_NETWORKS. */
export const SIM_ADDRESS_NETWORK = "127.0.0.0/8";

/** Host addresses of 127.0.0.0/8 whose last octet is 1–254, less 127.0.0.1 (this machine's own). */
export const SIM_ADDRESS_CAPACITY = 256 * 256 * 254 - 1;

/** The ordinal-th address handed out: 0 → 127.0.0.2, 252 → 127.0.0.254, 253 → 127.0.1.1, … (pure). */
export function simAddressAt(ordinal: number): string {
  if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal >= SIM_ADDRESS_CAPACITY)
    throw new RangeError(`No simulated node address #${ordinal}: 127.0.0.0/8 holds ${SIM_ADDRESS_CAPACITY} of them`);
  const k = ordinal + 1; // 127.0.0.1 is skipped
  const d = 1 + (k % 254);
  const rest = Math.floor(k / 254);
  return `127.${Math.floor(rest / 256)}.${rest % 256}.${d}`;
}

/** The ordinal of an address simAddressAt hands out, or null for any other string (pure). */
export function simAddressOrdinal(address: string): number | null {
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!m) return null;
  const [b, c, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (b > 255 || c > 255 || d < 1 || d > 254) return null;
  const k = (b * 256 + c) * 254 + (d - 1);
  return k === 0 ? null : k - 1;
}

/** The key a node's address is kept under: its cluster and hostname. */
export const simAddressKey = (clusterId: string, hostname: string) => `${clusterId}/${hostname}`;

/**
 * Addresses for `keys` (pure): a key already in `known` keeps its address; the others get the
 * lowest addresses nobody in `known` holds, in the order given. Entries of `known` that are not one
 * of our addresses, or that repeat an address an earlier entry holds (a hand-edited file), are
 * dropped and their keys allocated again. Returns the whole book, old entries included.
 */
export function allocateSimAddresses(known: ReadonlyMap<string, string>, keys: readonly string[]): Map<string, string> {
  const book = new Map<string, string>();
  const taken = new Set<number>();
  for (const [key, address] of known) {
    const ordinal = simAddressOrdinal(address);
    if (ordinal === null || taken.has(ordinal)) continue;
    taken.add(ordinal);
    book.set(key, address);
  }
  let next = 0;
  for (const key of keys) {
    if (book.has(key)) continue;
    while (taken.has(next)) next++;
    taken.add(next);
    book.set(key, simAddressAt(next));
  }
  return book;
}

const FILE = "addresses.json";
const LOCK_WAIT_MS = 30_000;
/** a lock whose holder is gone (killed between creating and removing it) is taken over after this */
const LOCK_STALE_MS = 10_000;

/**
 * The addresses of `keys` from the book in `stateDir` (created or extended as needed), under a
 * lock file so that simulators in other processes sharing the directory never hand out one twice.
 */
export function simAddressesFromBook(stateDir: string, keys: readonly string[]): Map<string, string> {
  mkdirSync(stateDir, { recursive: true });
  const file = path.join(stateDir, FILE);
  return withLock(`${file}.lock`, () => {
    const known = readBook(file);
    const book = allocateSimAddresses(known, keys);
    if (book.size !== known.size || [...book].some(([k, a]) => known.get(k) !== a)) {
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify({ version: 1, addresses: Object.fromEntries(book) }, null, 1)}\n`);
      renameSync(tmp, file);
    }
    return new Map(keys.map((k) => [k, book.get(k)!]));
  });
}

function readBook(file: string): Map<string, string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw e;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not the simulator's address book (not JSON): move it away to start a new one`);
  }
  const addresses = (parsed as { addresses?: unknown } | null)?.addresses;
  if (typeof addresses !== "object" || addresses === null) throw new Error(`${file} is not the simulator's address book (no "addresses")`);
  return new Map(Object.entries(addresses).filter((e): e is [string, string] => typeof e[1] === "string"));
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function withLock<T>(lock: string, fn: () => T): T {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lock, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      if (lockIsStale(lock)) {
        try {
          unlinkSync(lock);
        } catch {
          /* another process took it over first */
        }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lock} has been held for ${LOCK_WAIT_MS / 1000} s: is another simulator stuck?`);
      pause(20);
    }
  }
  try {
    return fn();
  } finally {
    unlinkSync(lock);
  }
}

/** The holder died (its pid is gone), or has held it far longer than a read and a write take. */
function lockIsStale(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, "utf8"));
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) {
      try {
        process.kill(pid, 0);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ESRCH") return true;
      }
    }
    return Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS;
  } catch {
    // gone already, or just created and not written yet: try again
    return false;
  }
}
