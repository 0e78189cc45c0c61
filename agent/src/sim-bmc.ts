import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  collection,
  errorBody,
  link,
  managerDocOf,
  mediaDocOf,
  systemDocOf,
  taskDoc,
  type Body,
  type SimBmcDocContext,
} from "./sim-bmc-docs";
import { BOOT_TARGETS, RESET_TYPES, SimBmcState, type MediaDevice, type SimBmcEvents, type SimBmcTiming } from "./sim-bmc-state";

// A simulated BMC: a Redfish service (DMTF DSP0266) for one simulated node, at the standard resource
// paths, with real state (agent/src/sim-bmc-state.ts): power, boot override, virtual media, tasks and
// sessions. It answers the way BMCs do, not the way our client would like: the service root is open,
// everything else needs an X-Auth-Token session or basic auth, resources carry ETags and PATCH checks
// If-Match (412), a reset to the state the system is in is refused (409), InsertMedia may answer 202
// with a task monitor, and busy periods answer 503 with Retry-After. The system and manager ids are
// derived from the node's hostname (never "1"), so clients must discover them. Faults on request:
// unreachable (the listener closes), auth (every credential refused), media_refused (InsertMedia 400),
// not_ready (the next N requests 503), task_fail (InsertMedia tasks end in Exception), expire_sessions.
// Debian's python3-sushy drives it in tests/integration/redfish-sushy.test.ts.

export type SimBmcFault = "unreachable" | "auth" | "media_refused" | "not_ready" | "task_fail" | "expire_sessions" | "clear";

export interface SimBmcOptions {
  hostname: string;
  /** where it listens (a simulated node's own loopback address); 127.0.0.1 by default */
  address?: string;
  port?: number;
  username?: string;
  password?: string;
  /** which resource offers the virtual CD: the Manager (as sushy 4 reads it) or the System */
  mediaOn?: "Manager" | "System";
  /** how the Reset action lists its ResetType values: inline, or through @Redfish.ActionInfo */
  resetInfo?: "inline" | "action_info";
  timing?: Partial<SimBmcTiming>;
  sessionTimeoutS?: number;
  on?: SimBmcEvents;
}

export interface SimBmc {
  url: string;
  username: string;
  password: string;
  systemId: string;
  managerId: string;
  state: SimBmcState;
  /** requests answered, by method */
  requests: Record<string, number>;
  sessions(): number;
  fault(kind: SimBmcFault, count?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSimBmc(opts: SimBmcOptions): Promise<SimBmc> {
  const seed = createHash("sha256").update(opts.hostname).digest("hex");
  const systemId = `${seed.slice(0, 4).toUpperCase()}-${seed.slice(4, 10)}`;
  const managerId = `bmc-${seed.slice(10, 16)}`;
  const username = opts.username ?? "admin";
  let password = opts.password ?? randomBytes(9).toString("base64url");
  const mediaOn = opts.mediaOn ?? "Manager";
  const resetInfo = opts.resetInfo ?? "inline";
  const timeoutS = opts.sessionTimeoutS ?? 1800;
  const state = new SimBmcState({ powerMs: 0, bootMs: 200, taskMs: 300, ...opts.timing }, opts.on);
  const sessions = new Map<string, { id: string; token: string; user: string; seen: number }>();
  let sessionSeq = 0;
  const requests: Record<string, number> = {};
  const faults = { auth: false, mediaRefused: false, notReady: 0 };

  const S = `/redfish/v1/Systems/${systemId}`;
  const M = `/redfish/v1/Managers/${managerId}`;
  const mediaBase = `${mediaOn === "Manager" ? M : S}/VirtualMedia`;

  const doc: SimBmcDocContext = { hostname: opts.hostname, seed, systemId, managerId, S, M, mediaBase, mediaOn, resetInfo, state };
  const systemDoc = () => systemDocOf(doc);
  const managerDoc = () => managerDocOf(doc);
  const mediaDoc = (d: MediaDevice) => mediaDocOf(doc, d);

  const authorized = (req: http.IncomingMessage): boolean => {
    if (faults.auth) return false;
    const token = req.headers["x-auth-token"];
    if (typeof token === "string") {
      for (const s of sessions.values())
        if (s.token === token) {
          if (Date.now() - s.seen > timeoutS * 1000) {
            sessions.delete(s.id);
            return false;
          }
          s.seen = Date.now();
          return true;
        }
      return false;
    }
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!basic) return false;
    const [u, ...p] = Buffer.from(basic, "base64").toString("utf8").split(":");
    return u === username && p.join(":") === password;
  };

  const handle = (req: http.IncomingMessage, body: Body | undefined, raw: string): [number, Body | undefined, Record<string, string>?] => {
    const method = req.method ?? "GET";
    const path = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "") || "/";
    if (path === "/redfish") return [200, { v1: "/redfish/v1/" }];
    if (faults.notReady > 0) {
      faults.notReady--;
      return [
        503,
        errorBody("ServiceTemporarilyUnavailable", "The service is temporarily unavailable. Retry in 1 seconds."),
        { "retry-after": "1" },
      ];
    }
    if (path === "/redfish/v1" && method === "GET")
      return [
        200,
        {
          "@odata.id": "/redfish/v1/",
          "@odata.type": "#ServiceRoot.v1_15_0.ServiceRoot",
          Id: "RootService",
          Name: "Root Service",
          RedfishVersion: "1.15.0",
          UUID: `${seed.slice(32, 40)}-${seed.slice(40, 44)}-4${seed.slice(45, 48)}-8${seed.slice(49, 52)}-${seed.slice(52, 64)}`,
          Systems: link("/redfish/v1/Systems"),
          Managers: link("/redfish/v1/Managers"),
          Chassis: link("/redfish/v1/Chassis"),
          Tasks: link("/redfish/v1/TaskService"),
          SessionService: link("/redfish/v1/SessionService"),
          Links: { Sessions: link("/redfish/v1/SessionService/Sessions") },
        },
      ];
    if (path === "/redfish/v1/SessionService/Sessions" && method === "POST") {
      if (!body || typeof body.UserName !== "string" || typeof body.Password !== "string")
        return [400, errorBody("PropertyMissing", "UserName and Password are required", ["#/UserName", "#/Password"])];
      if (faults.auth || body.UserName !== username || body.Password !== password)
        return [401, errorBody("ResourceAtUriUnauthorized", "Invalid username or password")];
      const id = String(++sessionSeq);
      const token = randomBytes(16).toString("hex");
      sessions.set(id, { id, token, user: username, seen: Date.now() });
      const loc = `/redfish/v1/SessionService/Sessions/${id}`;
      return [
        201,
        { "@odata.id": loc, "@odata.type": "#Session.v1_6_0.Session", Id: id, Name: `Session ${id}`, UserName: username },
        { "x-auth-token": token, location: loc },
      ];
    }
    if (!authorized(req))
      return [
        401,
        errorBody("NoValidSession", "There is no valid session established with the implementation."),
        { "www-authenticate": 'Basic realm="Redfish"' },
      ];

    if (path === "/redfish/v1/SessionService")
      return [
        200,
        {
          "@odata.id": path,
          "@odata.type": "#SessionService.v1_1_8.SessionService",
          Id: "SessionService",
          Name: "Session Service",
          ServiceEnabled: true,
          SessionTimeout: timeoutS,
          Sessions: link(`${path}/Sessions`),
        },
      ];
    if (path === "/redfish/v1/SessionService/Sessions")
      return [
        200,
        collection(
          path,
          "SessionCollection",
          [...sessions.keys()].map((id) => `${path}/${id}`),
        ),
      ];
    const sess = /^\/redfish\/v1\/SessionService\/Sessions\/([^/]+)$/.exec(path);
    if (sess) {
      const s = sessions.get(sess[1]!);
      if (!s) return [404, errorBody("ResourceMissingAtURI", `${path} does not exist`)];
      if (method === "DELETE") {
        sessions.delete(s.id);
        return [204, undefined];
      }
      return [200, { "@odata.id": path, "@odata.type": "#Session.v1_6_0.Session", Id: s.id, Name: `Session ${s.id}`, UserName: s.user }];
    }
    if (path === "/redfish/v1/Systems") return [200, collection(path, "ComputerSystemCollection", [S])];
    if (path === "/redfish/v1/Managers") return [200, collection(path, "ManagerCollection", [M])];
    if (path === "/redfish/v1/Chassis") return [200, collection(path, "ChassisCollection", ["/redfish/v1/Chassis/Enclosure"])];
    if (path === "/redfish/v1/Chassis/Enclosure")
      return [
        200,
        {
          "@odata.id": path,
          "@odata.type": "#Chassis.v1_21_0.Chassis",
          Id: "Enclosure",
          Name: "Enclosure",
          ChassisType: "RackMount",
          Links: { ComputerSystems: [link(S)], ManagedBy: [link(M)] },
        },
      ];
    if (path === S) {
      if (method === "GET") return [200, systemDoc(), { etag: `"sys-${state.systemVersion}"`, allow: "GET, PATCH" }];
      if (method !== "PATCH") return [405, errorBody("OperationNotAllowed", `${method} is not allowed on ${path}`)];
      const match = req.headers["if-match"];
      if (match && match !== "*" && match !== `"sys-${state.systemVersion}"`)
        return [412, errorBody("PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")];
      const boot = body?.Boot as Body | undefined;
      const extra = Object.keys(body ?? {}).filter((k) => k !== "Boot");
      if (!boot || extra.length)
        return [
          400,
          errorBody(
            "PropertyNotWritable",
            `Only Boot may be changed here${extra.length ? ` (not ${extra.join(", ")})` : ""}`,
            extra.map((k) => `#/${k}`),
          ),
        ];
      const said = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
      const enabled = boot.BootSourceOverrideEnabled;
      const target = boot.BootSourceOverrideTarget;
      if (enabled !== undefined && !["Disabled", "Once", "Continuous"].includes(said(enabled)))
        return [
          400,
          errorBody("PropertyValueNotInList", `BootSourceOverrideEnabled ${said(enabled)} is not allowed`, [
            "#/Boot/BootSourceOverrideEnabled",
          ]),
        ];
      if (target !== undefined && !(BOOT_TARGETS as readonly string[]).includes(said(target)))
        return [
          400,
          errorBody("PropertyValueNotInList", `BootSourceOverrideTarget ${said(target)} is not allowed`, [
            "#/Boot/BootSourceOverrideTarget",
          ]),
        ];
      state.setBoot({
        ...(enabled !== undefined ? { enabled: enabled as "Once" } : {}),
        ...(target !== undefined ? { target: said(target) } : {}),
        ...(typeof boot.BootSourceOverrideMode === "string" ? { mode: boot.BootSourceOverrideMode } : {}),
      });
      return [204, undefined];
    }
    if (path === `${S}/ResetActionInfo`)
      return [
        200,
        {
          "@odata.id": path,
          "@odata.type": "#ActionInfo.v1_3_0.ActionInfo",
          Id: "ResetActionInfo",
          Name: "Reset Action Info",
          Parameters: [{ Name: "ResetType", Required: true, DataType: "String", AllowableValues: [...RESET_TYPES] }],
        },
      ];
    if (path === `${S}/Actions/ComputerSystem.Reset` && method === "POST") {
      const type = body?.ResetType;
      if (typeof type !== "string") return [400, errorBody("ActionParameterMissing", "ResetType is required", ["#/ResetType"])];
      if (!(RESET_TYPES as readonly string[]).includes(type))
        return [400, errorBody("ActionParameterValueNotInList", `ResetType ${type} is not allowed`, ["#/ResetType"])];
      const refused = state.reset(type);
      return refused ? [409, errorBody("ActionNotSupported", refused)] : [204, undefined];
    }
    if (path === M) return [200, managerDoc()];
    if (path === mediaBase)
      return [
        200,
        collection(
          path,
          "VirtualMediaCollection",
          state.media.map((d) => `${mediaBase}/${d.id}`),
        ),
      ];
    const dev = new RegExp(
      `^${mediaBase.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/([^/]+)(/Actions/VirtualMedia\\.(InsertMedia|EjectMedia))?$`,
    ).exec(path);
    if (dev) {
      const d = state.device(dev[1]!);
      if (!d) return [404, errorBody("ResourceMissingAtURI", `${path} does not exist`)];
      if (!dev[3])
        return method === "GET"
          ? [200, mediaDoc(d), { etag: `"vm-${d.id}-${d.version}"`, allow: "GET" }]
          : [405, errorBody("OperationNotAllowed", `${method} is not allowed on ${path}`)];
      if (method !== "POST") return [405, errorBody("OperationNotAllowed", "Actions are invoked with POST")];
      if (dev[3] === "EjectMedia") {
        if (raw.trim() && (!body || Object.keys(body).length))
          return [400, errorBody("ActionParameterNotSupported", "EjectMedia takes no parameters")];
        state.eject(d);
        return [204, undefined];
      }
      const image = body?.Image;
      if (typeof image !== "string") return [400, errorBody("ActionParameterMissing", "Image is required", ["#/Image"])];
      if (!/^https?:\/\/[^\s]+$/.test(image))
        return [400, errorBody("ActionParameterValueFormatError", `Image ${image} is not an http(s) URL`, ["#/Image"])];
      if (!d.mediaTypes.some((t) => t === "CD" || t === "DVD") && /\.iso$/i.test(image))
        return [400, errorBody("ActionParameterValueError", `${d.id} takes ${d.mediaTypes.join(", ")} images, not CD images`, ["#/Image"])];
      if (d.inserted) return [409, errorBody("ResourceAlreadyExists", `${d.id} already holds ${d.image}: eject it first`)];
      if (faults.mediaRefused)
        return [
          400,
          errorBody("ActionParameterValueError", `The image at ${image} could not be mounted: the image server refused the connection`, [
            "#/Image",
          ]),
        ];
      const task = state.insert(d, image, body?.WriteProtected !== false);
      if (!task) return [204, undefined];
      return [
        202,
        taskDoc(task),
        {
          location: `/redfish/v1/TaskService/TaskMonitors/${task.id}`,
          "retry-after": String(Math.max(1, Math.ceil(state.timing.taskMs / 1000))),
        },
      ];
    }
    if (path === "/redfish/v1/TaskService")
      return [
        200,
        {
          "@odata.id": path,
          "@odata.type": "#TaskService.v1_2_0.TaskService",
          Id: "TaskService",
          Name: "Task Service",
          ServiceEnabled: true,
          Tasks: link(`${path}/Tasks`),
        },
      ];
    if (path === "/redfish/v1/TaskService/Tasks")
      return [
        200,
        collection(
          path,
          "TaskCollection",
          [...state.tasks.keys()].map((id) => `${path}/${id}`),
        ),
      ];
    const task = /^\/redfish\/v1\/TaskService\/(Tasks|TaskMonitors)\/([^/]+)$/.exec(path);
    if (task) {
      const t = state.tasks.get(task[2]!);
      if (!t || (task[1] === "TaskMonitors" && t.monitorRead)) return [404, errorBody("ResourceMissingAtURI", `${path} does not exist`)];
      if (task[1] === "Tasks") return [200, taskDoc(t)];
      // the monitor: 202 while running; once over, the operation's own outcome, once
      if (t.state === "Running") return [202, taskDoc(t), { "retry-after": "1" }];
      t.monitorRead = true;
      return t.state === "Completed"
        ? [204, undefined]
        : [400, errorBody("ActionParameterValueError", t.messages.at(-1) ?? "The task failed")];
    }
    return [404, errorBody("ResourceMissingAtURI", `${path} does not exist`)];
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests[req.method ?? "GET"] = (requests[req.method ?? "GET"] ?? 0) + 1;
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Body | undefined;
      if (raw.trim()) {
        try {
          body = JSON.parse(raw) as Body;
        } catch {
          res
            .writeHead(400, { "content-type": "application/json" })
            .end(JSON.stringify(errorBody("MalformedJSON", "The request body is not JSON")));
          return;
        }
      }
      const [status, out, headers] = handle(req, body, raw);
      res.writeHead(status, { "odata-version": "4.0", ...(out ? { "content-type": "application/json; charset=utf-8" } : {}), ...headers });
      res.end(out ? JSON.stringify(out) : undefined);
    });
  });
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, opts.address ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen(opts.port ?? 0);
  let listening = true;
  const shut = () =>
    new Promise<void>((resolve) => {
      if (!listening) return resolve();
      listening = false;
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  const host = (opts.address ?? "127.0.0.1").includes(":") ? `[${opts.address}]` : (opts.address ?? "127.0.0.1");

  return {
    url: `http://${host}:${port}`,
    username,
    get password() {
      return password;
    },
    systemId,
    managerId,
    state,
    requests,
    sessions: () => sessions.size,
    async fault(kind, count = 3) {
      if (kind === "unreachable") await shut();
      if (kind === "auth") faults.auth = true;
      if (kind === "media_refused") faults.mediaRefused = true;
      if (kind === "not_ready") faults.notReady = count;
      if (kind === "task_fail") state.failTasks = true;
      if (kind === "expire_sessions") sessions.clear();
      if (kind === "clear") {
        Object.assign(faults, { auth: false, mediaRefused: false, notReady: 0 });
        state.failTasks = false;
        if (!listening) {
          await listen(port);
          listening = true;
        }
      }
    },
    async close() {
      state.stop();
      await shut();
    },
    /** changes the BMC's password (an operator rotated it on the BMC) */
    set password(p: string) {
      password = p;
    },
  } as SimBmc;
}
