import { env } from "@/lib/env";

const DEFAULT_ORIGIN = "http://localhost:3000";

/** The app's public address (NEXTAUTH_URL) with `path` appended: links in emails, invoices and the console. */
export function publicUrl(path = ""): string {
  return `${(env().NEXTAUTH_URL ?? DEFAULT_ORIGIN).replace(/\/+$/, "")}${path}`;
}

/** Where tenants call the inference gateway (GATEWAY_PUBLIC_URL, else the app's own address) with `path` appended. */
export function gatewayUrl(path = ""): string {
  return `${(env().GATEWAY_PUBLIC_URL ?? env().NEXTAUTH_URL ?? DEFAULT_ORIGIN).replace(/\/+$/, "")}${path}`;
}

/** The product's name as account mail and the public pages say it (PRODUCT_NAME). */
export function productName(): string {
  return env().PRODUCT_NAME;
}
