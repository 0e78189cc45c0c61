// The demo fleet's accounts, shown on the sign-in page only in demo mode (DEMO_MODE=1, which
// `npm start` sets for the embedded database). The seed creates exactly these.
export const DEMO_ACCOUNTS = [
  { label: "Operator", email: "operator@gpuforge.local", password: "operator-demo-pass", role: "operator" as const, tenant: null },
  {
    label: "Tenant admin (Acme AI)",
    email: "admin@acme.test",
    password: "acme-admin-demo",
    role: "tenant_admin" as const,
    tenant: "Acme AI",
  },
  {
    label: "Tenant member (Acme AI)",
    email: "member@acme.test",
    password: "acme-member-demo",
    role: "tenant_member" as const,
    tenant: "Acme AI",
  },
  {
    label: "Tenant admin (Helix Bio)",
    email: "admin@helix.test",
    password: "helix-admin-demo",
    role: "tenant_admin" as const,
    tenant: "Helix Bio",
  },
  {
    label: "Tenant admin (Orbital Labs, prepaid)",
    email: "admin@orbital.test",
    password: "orbital-admin-demo",
    role: "tenant_admin" as const,
    tenant: "Orbital Labs",
  },
];
