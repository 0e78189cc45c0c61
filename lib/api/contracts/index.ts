import type { Contract } from "@/lib/http/contract";
import * as accounts from "./accounts";
import * as alerts from "./alerts";
import * as apiKeys from "./api-keys";
import * as billing from "./billing";
import * as clusters from "./clusters";
import * as endpoints from "./endpoints";
import * as fleet from "./fleet";
import * as jobs from "./jobs";
import * as marketing from "./marketing";
import * as operations from "./operations";
import * as pipelines from "./pipelines";
import * as platform from "./platform";
import * as providers from "./providers";
import * as pods from "./pods";
import * as reservations from "./reservations";
import * as slurm from "./slurm";
import * as serviceAccounts from "./service-accounts";
import * as tenants from "./tenants";
import * as workloads from "./workloads";
import * as bmc from "./bmc";
import * as handover from "./handover";

export {
  accounts,
  alerts,
  apiKeys,
  billing,
  marketing,
  clusters,
  endpoints,
  fleet,
  jobs,
  operations,
  pipelines,
  platform,
  pods,
  reservations,
  tenants,
  workloads,
  providers,
  bmc,
  slurm,
  handover,
  serviceAccounts,
};

/** Every operation the API serves. The OpenAPI document and the isolation test walk this list. */
export const allContracts: Contract[] = [
  platform,
  tenants,
  apiKeys,
  clusters,
  fleet,
  jobs,
  pipelines,
  workloads,
  endpoints,
  pods,
  reservations,
  alerts,
  billing,
  marketing,
  operations,
  providers,
  accounts,
  bmc,
  slurm,
  handover,
  serviceAccounts,
].flatMap((group) => Object.values(group as Record<string, Contract>));
