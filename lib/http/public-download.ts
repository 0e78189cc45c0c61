import "server-only";
import { consumeAddressRateLimit, guardAddress } from "./rate-limit";
import { clientIp } from "./route";

/**
 * The guard for plain downloads served outside route() (the installer and the agent bundle): the
 * address's anonymous budget pays for each, and each address gets `perMinute` of this download,
 * so nobody can turn a large file into a bandwidth flood.
 */
export async function admitDownload(request: Request, operation: string, perMinute: number): Promise<void> {
  const address = clientIp(request.headers);
  await guardAddress(address, false);
  await consumeAddressRateLimit(operation, address, perMinute);
}
