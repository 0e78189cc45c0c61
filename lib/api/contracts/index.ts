import type { Contract } from "@/lib/http/contract";
import * as apiKeys from "./api-keys";
import * as clusters from "./clusters";
import * as platform from "./platform";
import * as tenants from "./tenants";

export { apiKeys, clusters, platform, tenants };

/** Every operation the API serves. The OpenAPI document and the isolation test walk this list. */
export const allContracts: Contract[] = [platform, tenants, apiKeys, clusters].flatMap((group) =>
  Object.values(group as Record<string, Contract>),
);
