import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";

// Serves the DMTF-style mockup tree in tests/support/redfish-mockup (one index.json per resource, the
// layout of DMTF's Redfish-Mockup-Server) with the few behaviours a mockup server adds to make it
// writable: sessions and basic auth, weak ETags compared strongly on If-Match (RFC 7232: a weak
// ETag never matches If-Match, which is why clients must send the strong form), PATCH of a system's
// Boot, ComputerSystem.Reset, and virtual media whose InsertMedia answers 202 with a task monitor
// (202 twice, then 200 with the completed Task) and whose EjectMedia wants a JSON body (415 without
// one, as HPE iLO answers). It is written from DSP0266 and the mockup, not from our client.

const TREE = path.join(import.meta.dirname, "redfish-mockup");
type Doc = Record<string, unknown>;

export interface MockupRequest {
  method: string;
  path: string;
  ifMatch?: string;
  auth: "session" | "basic" | "none";
  body?: unknown;
}

export interface MockupOptions {
  username?: string;
  password?: string;
  /** serve over TLS with this key and certificate (PEM) */
  tls?: { key: string; cert: string };
  /** how many 202s the task monitor gives before the task completes */
  taskPolls?: number;
}

function load(): Map<string, Doc> {
  const docs = new Map<string, Doc>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const full = path.join(dir, e);
      if (statSync(full).isDirectory()) walk(full);
      else if (e === "index.json") {
        const doc = JSON.parse(readFileSync(full, "utf8")) as Doc;
        docs.set(String(doc["@odata.id"]).replace(/\/+$/, ""), doc);
      }
    }
  };
  walk(TREE);
  return docs;
}

const err = (id: string, message: string) => ({
  error: {
    code: "Base.1.15.GeneralError",
    message,
    "@Message.ExtendedInfo": [{ MessageId: `Base.1.15.${id}`, Message: message, Severity: "Warning" }],
  },
});

export async function startRedfishMockup(opts: MockupOptions = {}) {
  const docs = load();
  const username = opts.username ?? "root";
  const password = opts.password ?? "calvin-mockup";
  const sessions = new Map<string, string>();
  const tasks = new Map<string, { polls: number; media: string; image: string }>();
  const log: MockupRequest[] = [];
  const faults = { serverErrors: 0, mediaRefused: false, expireSessions: false };
  let seq = 0;
  const etag = (d: Doc) => `W/"${createHash("sha1").update(JSON.stringify(d)).digest("hex").slice(0, 16)}"`;

  const handle = (req: http.IncomingMessage, body: Doc | undefined, raw: string): [number, unknown, Record<string, string>?] => {
    const method = req.method ?? "GET";
    const p = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
    const token = req.headers["x-auth-token"];
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const auth: MockupRequest["auth"] = typeof token === "string" ? "session" : basic ? "basic" : "none";
    log.push({
      method,
      path: p,
      ...(req.headers["if-match"] ? { ifMatch: String(req.headers["if-match"]) } : {}),
      auth,
      ...(body ? { body } : {}),
    });
    if (p === "/redfish/v1" && method === "GET") return [200, docs.get(p)];
    if (p === "/redfish/v1/SessionService/Sessions" && method === "POST") {
      if (body?.UserName !== username || body?.Password !== password) return [401, err("ResourceAtUriUnauthorized", "Access denied")];
      const id = `s${++seq}`;
      const t = randomBytes(12).toString("hex");
      sessions.set(t, id);
      const loc = `/redfish/v1/SessionService/Sessions/${id}`;
      return [
        201,
        { "@odata.id": loc, "@odata.type": "#Session.v1_6_0.Session", Id: id, Name: "User Session", UserName: username },
        { "x-auth-token": t, location: loc },
      ];
    }
    if (faults.expireSessions) {
      sessions.clear();
      faults.expireSessions = false;
    }
    const ok =
      (typeof token === "string" && sessions.has(token)) ||
      (basic !== undefined && Buffer.from(basic, "base64").toString("utf8") === `${username}:${password}`);
    if (!ok) return [401, err("NoValidSession", "There is no valid session established with the implementation.")];
    if (method === "DELETE" && p.startsWith("/redfish/v1/SessionService/Sessions/")) {
      for (const [t, id] of sessions) if (p.endsWith(`/${id}`)) sessions.delete(t);
      return [204, undefined];
    }
    if (method === "GET" && faults.serverErrors > 0) {
      faults.serverErrors--;
      return [500, err("InternalError", "The request failed due to an internal service error.")];
    }
    const monitor = /^\/redfish\/v1\/TaskService\/TaskMonitors\/(\w+)$/.exec(p);
    if (monitor && method === "GET") {
      const t = tasks.get(monitor[1]!);
      if (!t) return [404, err("ResourceMissingAtURI", p)];
      const task = {
        "@odata.type": "#Task.v1_7_0.Task",
        "@odata.id": `/redfish/v1/TaskService/Tasks/${monitor[1]}`,
        Id: monitor[1],
        Name: "Mount virtual media",
      };
      if (t.polls-- > 0) return [202, { ...task, TaskState: "Running", PercentComplete: 50 }, { "retry-after": "1" }];
      const media = docs.get(t.media)!;
      Object.assign(media, { Image: t.image, ImageName: t.image.split("/").pop(), Inserted: true, ConnectedVia: "URI" });
      tasks.delete(monitor[1]!);
      return [
        200,
        {
          ...task,
          TaskState: "Completed",
          TaskStatus: "OK",
          PercentComplete: 100,
          Messages: [{ MessageId: "Base.1.15.Success", Message: "Mounted" }],
        },
      ];
    }
    const action = /^(.*)\/Actions\/(ComputerSystem\.Reset|VirtualMedia\.InsertMedia|VirtualMedia\.EjectMedia)$/.exec(p);
    if (action && method === "POST") {
      const target = docs.get(action[1]!);
      if (!target) return [404, err("ResourceMissingAtURI", p)];
      if (action[2] === "ComputerSystem.Reset") {
        const type = body?.ResetType;
        const to = {
          On: "On",
          ForceOff: "Off",
          GracefulShutdown: "Off",
          ForceRestart: "On",
          GracefulRestart: "On",
          PushPowerButton: target.PowerState === "On" ? "Off" : "On",
          Nmi: target.PowerState,
        }[String(type)];
        if (!to) return [400, err("ActionParameterValueNotInList", `ResetType ${String(type)} is not supported`)];
        target.PowerState = to;
        return [204, undefined];
      }
      if (action[2] === "VirtualMedia.EjectMedia") {
        if (!/json/.test(req.headers["content-type"] ?? "") || !raw.trim())
          return [415, err("UnsupportedMediaType", "Content-Type application/json with a body is required")];
        Object.assign(target, { Image: null, ImageName: null, Inserted: false, ConnectedVia: "NotConnected" });
        return [204, undefined];
      }
      if (typeof body?.Image !== "string") return [400, err("ActionParameterMissing", "Image is required")];
      if (target.Inserted) return [409, err("ResourceInStandby", "Media is already inserted")];
      if (faults.mediaRefused) return [400, err("ActionParameterValueError", `The image ${body.Image} cannot be retrieved`)];
      const id = `t${++seq}`;
      tasks.set(id, { polls: opts.taskPolls ?? 2, media: action[1]!, image: body.Image });
      return [202, undefined, { location: `/redfish/v1/TaskService/TaskMonitors/${id}`, "retry-after": "1" }];
    }
    const doc = docs.get(p);
    if (!doc) return [404, err("ResourceMissingAtURI", `${p} not found`)];
    if (method === "GET") return [200, doc, { etag: etag(doc), allow: "GET, PATCH" }];
    if (method === "PATCH" && typeof doc["@odata.type"] === "string" && doc["@odata.type"].startsWith("#ComputerSystem.")) {
      // If-Match is compared strongly: the weak ETag we send never matches, its opaque tag does
      const want = etag(doc).replace(/^W\//, "");
      if (req.headers["if-match"] !== want)
        return [412, err("PreconditionFailed", "The ETag supplied did not match the current ETag of the resource.")];
      Object.assign(doc.Boot as Doc, (body?.Boot as Doc | undefined) ?? {});
      return [204, undefined];
    }
    return [405, err("OperationNotAllowed", `${method} not allowed`)];
  };

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Doc | undefined;
      try {
        body = raw.trim() ? (JSON.parse(raw) as Doc) : undefined;
      } catch {
        body = undefined;
      }
      const [status, out, headers] = handle(req, body, raw);
      res.writeHead(status, { "odata-version": "4.0", ...(out ? { "content-type": "application/json" } : {}), ...headers });
      res.end(out ? JSON.stringify(out) : undefined);
    });
  };
  const server = opts.tls ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, onRequest) : http.createServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${opts.tls ? "https" : "http"}://127.0.0.1:${port}`,
    username,
    password,
    log,
    faults,
    doc: (p: string) => docs.get(p.replace(/\/+$/, "")),
    sessions: () => sessions.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
