import { spawnSync } from "node:child_process";
import { createHash, generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { chatEscape, chatLine, chatQuote } from "@/lib/alerts/chat-text";
import { notificationText } from "@/lib/alerts/delivery-policy";
import { tenantSafeDetails } from "@/lib/alerts/alert-json";
import { openApiDocumentJson } from "@/lib/api/openapi";
import { safeCallbackPath } from "@/lib/auth/callback-url";
import { anonymousPrincipal, assertOperator, type Actor, type PublicActor } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import {
  ACCOUNT_POLICY,
  ADDRESS_POLICY,
  KNOWN_PAIR_MS,
  PAIR_POLICY,
  SECOND_FACTOR_POLICY,
  admit,
  afterSuccess,
  backoffMs,
  isKnownPair,
  type ThrottleState,
} from "@/lib/auth/sign-in-throttle";
import { assertAppServerConfig, assertNodeNetworks, authSecret, ConfigError, parseEnv } from "@/lib/env";
import { addressScope, clientAddress, parseCidrList, withPeerAddress } from "@/lib/http/client-address";
import { consumeAddressRateLimit, guardAddress, recordFailedAuth } from "@/lib/http/rate-limit";
import { refuseNul } from "@/lib/http/refuse-nul";
import { clientResponseHeaders } from "@/lib/gateway/proxy-headers";
import { renderMarkdown } from "@/lib/marketing/blog";
import { installScript } from "@/lib/agent-install/install-script";
import { PUBLIC_KEY_PATTERN, readSigningKey, signBundle, signedStatement, verifyBundle } from "@/lib/agent-install/bundle-signing";

describe("client addresses trust forwarded headers only from configured proxies", () => {
  const none = { hops: 0, cidrs: [] };
  it("without trust, the socket's address (the entry our server appended) is the client, whatever the client wrote", () => {
    const header = withPeerAddress("1.2.3.4, 5.6.7.8", "203.0.113.9");
    expect(header).toBe("1.2.3.4, 5.6.7.8, 203.0.113.9");
    expect(clientAddress(header, none)).toBe("203.0.113.9");
    expect(clientAddress(withPeerAddress(undefined, "::ffff:198.51.100.1"), none)).toBe("198.51.100.1");
    // the old rule took the first value: rotating it evaded every per-address limit
    for (const spoof of ["10.0.0.1", "10.0.0.2", "garbage"])
      expect(clientAddress(withPeerAddress(spoof, "203.0.113.9"), none)).toBe("203.0.113.9");
  });
  it("with TRUSTED_PROXY_HOPS, walks left over that many proxies and no further", () => {
    expect(clientAddress("9.9.9.9, 198.51.100.7, 10.0.0.5", { hops: 1, cidrs: [] })).toBe("198.51.100.7");
    expect(clientAddress("9.9.9.9, 198.51.100.7, 10.0.0.5, 10.0.0.6", { hops: 2, cidrs: [] })).toBe("198.51.100.7");
    expect(clientAddress("10.0.0.5", { hops: 1, cidrs: [] })).toBe("10.0.0.5");
  });
  it("with TRUSTED_PROXIES, skips addresses inside those networks from the right", () => {
    const cidrs = parseCidrList("10.0.0.0/8, 2001:db8::/32")!;
    expect(clientAddress("6.6.6.6, 198.51.100.7, 10.1.2.3, 2001:db8::1", { hops: 0, cidrs })).toBe("198.51.100.7");
    expect(clientAddress("6.6.6.6, 198.51.100.8", { hops: 0, cidrs })).toBe("198.51.100.8");
    expect(parseCidrList("10.0.0.0/33")).toBeNull();
    expect(parseCidrList("not-an-ip")).toBeNull();
    expect(parseCidrList("192.0.2.7")).toHaveLength(1);
  });
  it("per-address limits count an IPv4 address alone and an IPv6 address by its /64", () => {
    expect(addressScope("203.0.113.9")).toBe("203.0.113.9");
    expect(addressScope("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(addressScope("2001:0db8:0001:0002:ffff:eeee:dddd:cccc")).toBe("2001:db8:1:2::/64");
    expect(addressScope("unknown")).toBe("unknown");
  });
  it("every per-address limit counts an IPv6 caller by its /64, so rotating the low bits earns no fresh counter", async () => {
    const prefix = "2001:db8:77:1";
    const inside = (i: number) => `${prefix}:${i.toString(16)}:0:0:${(i * 7).toString(16)}`;
    // failed authentications from thirty different addresses of one /64 lock the whole /64 out…
    for (let i = 1; i <= 30; i++) await recordFailedAuth(inside(i));
    await expect(guardAddress(inside(999), true)).rejects.toMatchObject({ code: "rate_limited" });
    // …and nobody else: the next /64, and IPv4 addresses, keep their own counters
    await expect(guardAddress("2001:db8:77:2::1", true)).resolves.toBeUndefined();
    await expect(guardAddress("198.51.100.44", true)).resolves.toBeUndefined();
    // an operation's own per-address limit counts the same way
    for (let i = 1; i <= 3; i++) await consumeAddressRateLimit("unit-test-op", `2001:db8:88:1::${i}`, 3);
    await expect(consumeAddressRateLimit("unit-test-op", "2001:db8:88:1::ffff", 3)).rejects.toMatchObject({ code: "rate_limited" });
    await expect(consumeAddressRateLimit("unit-test-op", "2001:db8:88:2::1", 3)).resolves.toBeUndefined();
  });
  it("configuration names bad proxy settings", () => {
    expect(() => parseEnv({ TRUSTED_PROXIES: "10.0.0.0/99" })).toThrow(/TRUSTED_PROXIES/);
    expect(() => parseEnv({ TRUSTED_PROXIES: "10.0.0.0/8", TRUSTED_PROXY_HOPS: "1" })).toThrow(/not both/);
    expect(parseEnv({ TRUSTED_PROXIES: "10.0.0.0/8" }).TRUSTED_PROXIES).toHaveLength(1);
  });
});

describe("callback URLs after sign-in", () => {
  const origin = "https://gpuforge.example";
  it("keeps same-origin paths", () => {
    expect(safeCallbackPath("/admin/tenants?x=1#top", origin)).toBe("/admin/tenants?x=1#top");
    expect(safeCallbackPath("/dashboard", origin)).toBe("/dashboard");
  });
  it("refuses whatever a browser would resolve to another origin", () => {
    for (const bad of [
      "/%5Cevil.example",
      "/%09/evil.example",
      "/\\evil.example",
      "//evil.example",
      "/%2F/evil.example",
      "/%255Cevil.example",
      "https://evil.example/x",
      "javascript:alert(1)",
      "/\t/evil.example",
      "",
      "dashboard",
    ]) {
      expect(safeCallbackPath(bad, origin), bad).toBeNull();
    }
  });
});

describe("sign-in throttle policy", () => {
  it("gives a patient second-factor guesser about a hundred codes a day, not its free tries back after every capped wait", () => {
    let s: ThrottleState | null = null;
    let now = 0;
    let guesses = 0;
    while (now < 86_400_000) {
      const d = admit(s, now, SECOND_FACTOR_POLICY);
      if (d.allowed) {
        guesses++;
        s = d.next;
        now += 1;
      } else now += d.retryAfterMs + 1;
    }
    // with the counter forgotten as soon as the 15-minute cap had passed: several hundred a day
    expect(guesses).toBeLessThanOrEqual(110);
    expect(guesses).toBeGreaterThan(50);
  });

  it("is free up to the allowance, then doubles each failure up to the cap", () => {
    expect(backoffMs(10, PAIR_POLICY)).toBe(0);
    expect([11, 12, 13, 14].map((n) => backoffMs(n, PAIR_POLICY))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(40, PAIR_POLICY)).toBe(15 * 60_000);
    expect(backoffMs(80, ACCOUNT_POLICY)).toBe(60_000);
    expect(backoffMs(200, ADDRESS_POLICY)).toBe(15 * 60_000);
  });
  it("refuses while blocked without counting, forgets after a quiet spell, and a success gives back only its own attempt", () => {
    const now = 1_000_000;
    expect(admit({ failures: 12, blockedUntil: now + 500, lastFailureAt: now }, now, PAIR_POLICY)).toEqual({
      allowed: false,
      retryAfterMs: 500,
    });
    expect(admit({ failures: 12, blockedUntil: now - 16 * 60_000, lastFailureAt: now - 20 * 60_000 }, now, PAIR_POLICY)).toEqual({
      allowed: true,
      next: { failures: 1, blockedUntil: null, lastFailureAt: now },
    });
    // waiting out the wait is not a quiet spell: the failures are still counted
    expect(admit({ failures: 12, blockedUntil: now - 1, lastFailureAt: now - 20 * 60_000 }, now, PAIR_POLICY)).toMatchObject({
      allowed: true,
      next: { failures: 13 },
    });
    const a = admit({ failures: 10, blockedUntil: null, lastFailureAt: now - 1 }, now, PAIR_POLICY);
    expect(a).toEqual({ allowed: true, next: { failures: 11, blockedUntil: now + 1000, lastFailureAt: now } });
    expect(afterSuccess("account", { failures: 11, blockedUntil: now + 1000, lastFailureAt: now })).toEqual({
      failures: 0,
      blockedUntil: null,
      lastFailureAt: null,
    });
    expect(afterSuccess("address", { failures: 25, blockedUntil: now + 1000, lastFailureAt: now })).toEqual({
      failures: 24,
      blockedUntil: null,
      lastFailureAt: now,
    });
  });
  it("a pair that signed in within the window is known; older or never is not", () => {
    const now = KNOWN_PAIR_MS * 2;
    expect(isKnownPair(null, now)).toBe(false);
    expect(isKnownPair(now - 1000, now)).toBe(true);
    expect(isKnownPair(now - KNOWN_PAIR_MS - 1, now)).toBe(false);
    expect(afterSuccess("pair", { failures: 11, blockedUntil: now + 1000, lastFailureAt: now })).toEqual({
      failures: 0,
      blockedUntil: null,
      lastFailureAt: null,
    });
  });
});

describe("chat webhook text", () => {
  it("escapes control sequences and line breaks in every user-chosen value", () => {
    expect(chatEscape("<!channel> & <https://evil|click>")).toBe("&lt;!channel&gt; &amp; &lt;https://evil|click&gt;");
    expect(chatLine("job\nDetails: <https://evil>")).toBe("job Details: &lt;https://evil&gt;");
    expect(chatQuote("hi\n<!here>")).toBe("> hi\n> &lt;!here&gt;");
    const text = notificationText(
      {
        status: "firing",
        severity: "warning",
        rule_name: "Idle",
        subject_label: "<!channel> train",
        message: "Job <https://evil|x> idle",
        fired_at: new Date(0),
        resolved_at: null,
        link: "https://gpuforge.test/a",
      },
      "chat",
    );
    expect(`${text.subject}\n${text.text}`).not.toMatch(/<(?!\/)/);
    expect(text.text).toContain("&lt;!channel&gt; train");
    // email keeps the words as written
    expect(
      notificationText({
        status: "firing",
        severity: "warning",
        rule_name: "Idle",
        subject_label: "a<b",
        message: "m",
        fired_at: new Date(0),
        resolved_at: null,
        link: "l",
      }).subject,
    ).toContain("a<b");
  });
});

describe("tenants' view of alert details", () => {
  it("keeps figures, drops fleet ids, hostnames and people", () => {
    expect(
      tenantSafeDetails({
        node: "gpu-a-01",
        cause: "XID 79 on gpu-a-01",
        window_s: 600,
        job_id: "0f0e0d0c-0000-4000-8000-000000000000",
        by: "ops@gpuforge.test",
        note: "ops@gpuforge.test",
        avg_utilization_pct: 2,
      }),
    ).toEqual({
      cause: "XID 79 on gpu-a-01",
      window_s: 600,
      avg_utilization_pct: 2,
    });
  });
});

describe("blog Markdown", () => {
  it("renders Markdown and strips script, handlers and javascript: links", () => {
    const html = renderMarkdown(
      "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1)) **bold**",
    );
    expect(html).toContain("<h1>Title</h1>");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).not.toMatch(/<script|onerror|javascript:/i);
  });
});

describe("configuration a production app must have (issue 27)", () => {
  const base = { NEXTAUTH_SECRET: "x".repeat(32), NODE_ENV: "production" };
  it("its own public address, and the networks nodes' addresses are in", () => {
    expect(() => assertAppServerConfig({ ...base, NODE_ADDRESS_NETWORKS: "10.0.0.0/8" })).toThrow(
      /NEXTAUTH_URL: must be set in production/,
    );
    expect(() => assertAppServerConfig({ ...base, NEXTAUTH_URL: "https://cp.example" })).toThrow(
      /NODE_ADDRESS_NETWORKS: must be set in production/,
    );
    expect(assertAppServerConfig({ ...base, NEXTAUTH_URL: "https://cp.example", NODE_ADDRESS_NETWORKS: "10.0.0.0/8" }).NODE_ENV).toBe(
      "production",
    );
    // the gateway connects to nodes, so it names their networks too; the public listener needs neither
    expect(() => assertNodeNetworks(parseEnv(base))).toThrow(/NODE_ADDRESS_NETWORKS/);
    // development keeps working without them
    expect(assertAppServerConfig({ NEXTAUTH_SECRET: "x".repeat(32), NODE_ENV: "development" }).NODE_ENV).toBe("development");
  });
  it("the agents' published port range, as the agents have it", () => {
    expect(parseEnv({}).AGENT_PUBLISHED_PORTS).toEqual({ min: 40_000, max: 44_999 });
    for (const bad of ["80-90", "40000", "5-4", "44999-40000", "1-65535", "40000-70000"])
      expect(() => parseEnv({ AGENT_PUBLISHED_PORTS: bad }), bad).toThrow(/AGENT_PUBLISHED_PORTS/);
  });
});

describe("configuration: no default secrets, no dev mode in production", () => {
  it("has no built-in session secret in any mode", () => {
    for (const mode of [{}, { NODE_ENV: "production", DEMO_MODE: "1" }, { NODE_ENV: "development" }]) {
      expect(() => authSecret(parseEnv(mode))).toThrow(/NEXTAUTH_SECRET/);
    }
    expect(() => parseEnv({ NEXTAUTH_SECRET: "x".repeat(20) })).toThrow(ConfigError);
  });
  it("refuses Inngest dev mode in production", () => {
    expect(() => parseEnv({ NODE_ENV: "production", INNGEST_DEV: "1" })).toThrow(/INNGEST_DEV/);
    expect(parseEnv({ NODE_ENV: "development", INNGEST_DEV: "1" }).INNGEST_DEV).toBe("1");
  });
});

describe("anonymous callers", () => {
  it("are a principal kind of their own that operator-only code refuses", () => {
    // the compiler refuses an anonymous caller wherever an Actor is expected (npm test type-checks this file)
    // @ts-expect-error: a PublicActor is not an Actor
    const asActor: Actor = { principal: anonymousPrincipal } satisfies PublicActor;
    expect(() => assertOperator(asActor.principal)).toThrow(/Operator access required/);
    expect(() => tenantScope(asActor.principal)).toThrow();
  });
});

describe("the OpenAPI document", () => {
  it("is built once per process and served with a stable ETag", () => {
    const first = openApiDocumentJson();
    expect(openApiDocumentJson()).toBe(first);
    expect(first.etag).toMatch(/^"[\w-]+"$/);
  });
});

describe("signed bundles (issue 27)", () => {
  const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  const key = readSigningKey(pem);
  const sha = "ab".repeat(32);

  it("takes an Ed25519 key as PEM, PEM on one line, or base64 DER, and refuses anything else, saying why", () => {
    expect(key.publicKey).toMatch(PUBLIC_KEY_PATTERN);
    expect(readSigningKey(pem.replace(/\n/g, "\\n")).publicKey).toBe(key.publicKey);
    expect(readSigningKey(key.privateKey.export({ type: "pkcs8", format: "der" }).toString("base64")).publicKey).toBe(key.publicKey);
    expect(() => readSigningKey("not a key")).toThrow(/is not a private key/);
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    expect(() => readSigningKey(rsa)).toThrow(/must be an Ed25519 key, not rsa/);
  });

  it("a signature vouches for one kind, architecture and content only", () => {
    const sig = signBundle(key, "agent", "x86_64", sha);
    expect(verifyBundle(key.publicKey, "agent", "x86_64", sha, sig)).toBe(true);
    expect(verifyBundle(key.publicKey, "slurm-bridge", "x86_64", sha, sig)).toBe(false);
    expect(verifyBundle(key.publicKey, "agent", "aarch64", sha, sig)).toBe(false);
    expect(verifyBundle(key.publicKey, "agent", "x86_64", "cd".repeat(32), sig)).toBe(false);
    expect(() => signedStatement("agent\nkind=x", "x86_64", sha)).toThrow(/not a bundle/);
  });

  it("the installers' shell check accepts exactly what the control plane signed (the same statement, byte for byte)", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "verify-bundle-"));
    const bundle = path.join(dir, "bundle.tar.gz");
    writeFileSync(bundle, "pretend this is a bundle\n");
    const digest = createHash("sha256").update(readFileSync(bundle)).digest("hex");
    writeFileSync(path.join(dir, "sig"), signBundle(key, "agent", "x86_64", digest));
    const check = (kind: string, publicKey: string) =>
      spawnSync(
        "sh",
        [
          "-c",
          `fail() { echo "$*" >&2; exit 2; }; . "${path.resolve("lib/agent-install/verify-bundle.sh")}"; verify_bundle "$@"`,
          "sh",
          kind,
          "x86_64",
          bundle,
          path.join(dir, "sig"),
          publicKey,
        ],
        { encoding: "utf8" },
      ).status;
    expect(check("agent", key.publicKey)).toBe(0);
    expect(check("slurm-bridge", key.publicKey)).toBe(1);
    expect(
      check(
        "agent",
        readSigningKey(generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string).publicKey,
      ),
    ).toBe(1);
    writeFileSync(bundle, "pretend this is a bundle, changed\n");
    expect(check("agent", key.publicKey)).toBe(1);
  });

  it("every installer served checks its bundle (the shared check is in the script)", () => {
    const script = installScript("https://cp.example.com");
    expect(script).toContain("verify_bundle() {");
    // whichever bundle it installs (the agent, or the Slurm bridge with --slurm-bridge), under that bundle's name
    expect(script).toContain('verify_bundle "$KIND" "$ARCH"');
    expect(script).toContain('BUNDLE="$URL/install/$KIND-linux-$ARCH.tar.gz"');
    expect(script).not.toContain("__GPUFORGE_VERIFY_BUNDLE__");
    expect(script).not.toContain(".sha256");
  });

  it("the configured key is checked at start, naming the variable", () => {
    const prod = {
      NEXTAUTH_SECRET: "x".repeat(32),
      NODE_ENV: "production",
      NEXTAUTH_URL: "https://cp.example",
      NODE_ADDRESS_NETWORKS: "10.0.0.0/8",
    };
    expect(() => assertAppServerConfig({ ...prod, BUNDLE_SIGNING_KEY: "garbage" })).toThrow(/BUNDLE_SIGNING_KEY: is not a private key/);
    expect(() => assertAppServerConfig({ ...prod, BUNDLE_SIGNING_KEY_FILE: "/nonexistent/key.pem" })).toThrow(
      /BUNDLE_SIGNING_KEY_FILE: cannot be read: ENOENT/,
    );
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "signing-")), "key.pem");
    writeFileSync(file, pem);
    expect(() => assertAppServerConfig({ ...prod, BUNDLE_SIGNING_KEY: pem, BUNDLE_SIGNING_KEY_FILE: file })).toThrow(/not both/);
    expect(assertAppServerConfig({ ...prod, BUNDLE_SIGNING_KEY_FILE: file }).BUNDLE_SIGNING_KEY_FILE).toBe(file);
  });
});

describe("the node installer's embedded address", () => {
  it("embeds a plain http(s) origin and refuses anything a shell could read as more than a word", () => {
    expect(installScript("https://cp.example.com:8443/")).toContain('URL="https://cp.example.com:8443"');
    for (const bad of ["https://x$(reboot)", "https://x`id`", 'https://x"; rm -rf /', "ftp://cp.example.com", "https://a b"]) {
      expect(() => installScript(bad), bad).toThrow(/not a control plane URL/);
    }
  });
});

describe("NUL characters are refused where input enters, naming the field", () => {
  const refusal = (value: unknown, path?: string) => {
    try {
      refuseNul(value, path);
      return null;
    } catch (e) {
      return (e as { details?: unknown }).details;
    }
  };
  it("lets clean values through, however large", () => {
    const batch = {
      metrics: Array.from({ length: 5_000 }, (_, i) => ({ gpu_uuid: `GPU-${i}`, utilization_pct: i % 100, xid_errors: [13], note: null })),
    };
    expect(refusal(batch, "body")).toBeNull();
    // oxlint-disable-next-line no-sparse-arrays -- the hole is what is tested
    expect(refusal([, "a"], "body")).toBeNull(); // a hole is no string
    expect(refusal(Object.create({ inherited: "x\u0000" }), "body")).toBeNull(); // only own keys are input
  });
  it("names the first string or key that holds one", () => {
    expect(refusal({ metrics: [{ gpu_uuid: "ok" }, { gpu_uuid: "GPU\u00001" }] }, "body")).toEqual([
      { path: "body.metrics[1].gpu_uuid", message: "Must not contain NUL characters" },
    ]);
    expect(refusal({ a: { "b\u0000": 1 } }, "body")).toEqual([{ path: "body.a", message: "Field names must not contain NUL characters" }]);
    expect(refusal({ q: "x\u0000" })).toEqual([{ path: "q", message: "Must not contain NUL characters" }]);
    expect(refusal("\u0000")).toEqual([{ path: "body", message: "Must not contain NUL characters" }]);
  });
});

describe("what a replica's answer may carry to the client", () => {
  it("never sets cookies or origin-wide policies on the control plane's origin, and renders in an opaque origin", () => {
    const out = clientResponseHeaders(
      {
        "content-type": "text/html",
        "set-cookie": ["next-auth.session-token=planted; Path=/", "__Secure-next-auth.session-token=x"],
        "clear-site-data": '"cookies"',
        "strict-transport-security": "max-age=0",
        "alt-svc": 'h2="evil.example:443"',
        "content-security-policy": "script-src *",
        "x-model": "llama",
      },
      { replicaId: "r1", requestId: "q1" },
    );
    for (const h of ["set-cookie", "clear-site-data", "strict-transport-security", "alt-svc"]) expect(out[h], h).toBeUndefined();
    expect(out["content-security-policy"]).toBe("sandbox");
    expect(out["x-content-type-options"]).toBe("nosniff");
    expect(out["x-model"]).toBe("llama");
  });
});
