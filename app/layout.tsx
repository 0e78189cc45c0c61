import type { Metadata } from "next";
import localFont from "next/font/local";
import { connection } from "next/server";
import "./globals.css";
import { siteUrl } from "@/lib/marketing/site-url";

// Self-hosted Inter: next/font/google would download at build time, which offline machines can't.
const inter = localFont({
  src: "../node_modules/@fontsource-variable/inter/files/inter-latin-wght-normal.woff2",
  variable: "--font-inter",
  display: "swap",
});

export const metadata: Metadata = {
  metadataBase: siteUrl(),
  openGraph: { siteName: "GPUForge", type: "website" },
  title: { default: "GPUForge — the control plane for GPU clouds", template: "%s · GPUForge" },
  description:
    "Turn racks of GPU servers into a shared, billed, self-healing service: fleet registry, fair scheduling with quotas, per-second billing and automatic remediation.",
  // static files in public/: the icons and the web app manifest
  icons: {
    icon: [
      { url: "/favicon.ico", sizes: "16x16 32x32" },
      { url: "/icons/icon.svg", type: "image/svg+xml" },
    ],
  },
  manifest: "/manifest.webmanifest",
};

// Every page renders per request: its scripts carry the nonce of the response's
// Content-Security-Policy (proxy.ts), which a page rendered once at build time could not.
export default async function RootLayout({ children }: { children: React.ReactNode }) {
  await connection();
  return (
    <html lang="en" className={inter.variable}>
      <body className="min-h-screen font-sans">{children}</body>
    </html>
  );
}
