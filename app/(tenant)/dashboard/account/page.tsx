import { AccountSecurity } from "@/components/shell/account-security";
import { accountPage } from "@/lib/accounts/account-page";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Account" };

export default page({ plane: "tenant", path: "/dashboard/account", load: ({ principal }) => accountPage(principal) }, ({ data }) => (
  <AccountSecurity view={data} />
));
