import type { NextConfig } from "next";
import { API_CONTENT_SECURITY_POLICY } from "./lib/http/security-headers";

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  allowedDevOrigins: ["127.0.0.1"],
  typedRoutes: false,
  // the agent bundle (lib/agent-install) builds with esbuild and packs with tar at run time
  serverExternalPackages: ["esbuild", "tar"],
  // forbidden() from next/navigation: a tenant user in the operator plane gets a real 403 page
  experimental: { authInterrupts: true },
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
          { key: "X-Frame-Options", value: "DENY" },
        ],
      },
      // the JSON API and its file downloads (pages get a policy with a nonce per request, proxy.ts);
      // NextAuth's own routes are left out: its built-in pages carry an inline style
      { source: "/api/:path((?!auth/).*)", headers: [{ key: "Content-Security-Policy", value: API_CONTENT_SECURITY_POLICY }] },
    ];
  },
};

export default config;
