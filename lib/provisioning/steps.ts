import type { OpenedBmc } from "@/lib/bmc/open-bmc";
import type { RedfishClient } from "@/lib/redfish/client";
import { pollTask, type TaskRef } from "@/lib/redfish/requests";
import { RedfishError } from "@/lib/redfish/errors";
import {
  discoverManager,
  discoverSystem,
  ejectMedia,
  findCdMedia,
  mediaShows,
  powerStateOf,
  requestPower,
  setOneTimeCdBoot,
  startInsertMedia,
} from "@/lib/redfish/operations";
import { text } from "@/lib/redfish/resources";
import type { StepState } from "./plan";
import type { ProvisioningStep } from "./schemas";

// What each provisioning step does on one visit. A step either finishes (with what it found) or
// says it must wait (a reset settling, an image mounting, the agent not back yet) and what it has
// done so far, so a later visit, by this worker or another, picks up where it stopped: a reset is
// never sent twice because the step first reads the power state, an InsertMedia task is polled
// through the monitor it kept, not asked for again. Each visit waits inline at most `inlineWaitMs`.

/** What the steps learn and later steps use (node_workflows.details). */
export interface ProvisioningFacts {
  image_url: string;
  system?: string;
  manager?: string;
  media?: string;
  media_on?: "System" | "Manager";
  manufacturer?: string | null;
  model?: string | null;
  boot_target?: string;
  powered_on_at?: string;
}

export interface StepEnv {
  /** the node's BMC, logged in on first use */
  bmc(): Promise<RedfishClient>;
  opened: OpenedBmc;
  facts: ProvisioningFacts;
  /** the step's progress from earlier visits (without its exchange log) */
  state: StepState;
  inlineWaitMs: number;
  agentTimeoutMs: number;
  /** how often the agent's return is looked for */
  agentPollMs: number;
  /** when the node's agent was last heard from */
  agentSeenAt(): Promise<Date | null>;
}

export type StepOutcome =
  | { kind: "done"; message: string; facts?: Partial<ProvisioningFacts>; state?: Record<string, unknown> }
  | { kind: "wait"; message: string; state: Record<string, unknown>; retryInMs: number };

/** The agent never came back after the power-on. */
export class AgentTimeout extends Error {
  override name = "AgentTimeout";
}

const done = (message: string, more: Omit<Extract<StepOutcome, { kind: "done" }>, "kind" | "message"> = {}): StepOutcome => ({
  kind: "done",
  message,
  ...more,
});
const secondsSince = (iso: string) => Math.round((Date.now() - Date.parse(iso)) / 1000);

function need<K extends keyof ProvisioningFacts>(facts: ProvisioningFacts, key: K): NonNullable<ProvisioningFacts[K]> {
  const v = facts[key];
  if (v === undefined || v === null) throw new RedfishError("bad_answer", `discovery found no ${String(key)}: the workflow cannot go on`);
  return v as NonNullable<ProvisioningFacts[K]>;
}

async function discover(e: StepEnv): Promise<StepOutcome> {
  const c = await e.bmc();
  const system = await discoverSystem(c, { systemId: e.opened.systemId, hostname: e.opened.node.hostname });
  const manager = await discoverManager(c, system);
  const cd = await findCdMedia(c, system, manager);
  const manufacturer = text(system.json.Manufacturer) || null;
  const model = text(system.json.Model) || null;
  return done(
    `System ${text(system.json.Id, system.path)}${manufacturer ? ` (${[manufacturer, model].filter(Boolean).join(" ")})` : ""}, PowerState ${text(system.json.PowerState, "unknown")}; virtual CD ${text(cd.media.json.Id, cd.media.path)} on the ${cd.on}; ${c.authMode === "session" ? "session" : "basic"} auth`,
    {
      facts: { system: system.path, manager: manager?.path, media: cd.media.path, media_on: cd.on, manufacturer, model },
      state: { system: system.path, media: cd.media.path, ...(cd.quirk ? { quirk: cd.quirk } : {}) },
    },
  );
}

/** Power off or on: the reset is sent once (and only when the system is not already there), then PowerState is read until it shows the result. */
async function power(e: StepEnv, action: "on" | "off"): Promise<StepOutcome> {
  const c = await e.bmc();
  const system = need(e.facts, "system");
  const want = action === "on" ? "On" : "Off";
  const poll = c.timings.powerPollMs;
  let state: Record<string, unknown> = { ...e.state };
  if (typeof state.sent_at !== "string") {
    const o = await requestPower(c, system, action);
    state = { ...state, sent_at: new Date().toISOString(), reset_type: o.reset_type, power_state_before: o.power_state_before };
  }
  const sentAt = state.sent_at as string;
  const sent = state.reset_type ? `${text(state.reset_type)} sent` : "nothing sent";
  const inlineUntil = Date.now() + e.inlineWaitMs;
  for (;;) {
    const now = await powerStateOf(c, system);
    if (now === want || now === null) {
      // the agent is back once it is heard from after the reset was sent (the system was seen off
      // before it): not after PowerState showed On, which a fast boot can beat
      const facts = action === "on" ? { powered_on_at: state.reset_type ? sentAt : new Date().toISOString() } : {};
      return done(
        state.reset_type
          ? `${sent}; PowerState ${now ?? "(not reported)"} after ${secondsSince(sentAt)} s`
          : `Already ${want} (PowerState ${text(state.power_state_before)}); nothing sent`,
        { facts, state },
      );
    }
    if (Date.now() - Date.parse(sentAt) > c.timings.powerTimeoutMs)
      throw new RedfishError("timeout", `PowerState is still ${now} ${secondsSince(sentAt)} s after the reset (${sent})`, { path: system });
    if (Date.now() + poll > inlineUntil)
      return { kind: "wait", message: `${sent}; PowerState ${now}, waiting for ${want}`, state, retryInMs: poll };
    await c.pause(poll);
  }
}

async function eject(e: StepEnv): Promise<StepOutcome> {
  const c = await e.bmc();
  const media = need(e.facts, "media");
  const r = await ejectMedia(c, media);
  return done(r.ejected ? `Ejected what ${media} held` : `${media} held nothing`);
}

/** Insert: asked for once; a 202's task is followed through the monitor kept in the step; then the device must show the image. */
async function insert(e: StepEnv): Promise<StepOutcome> {
  const c = await e.bmc();
  const media = need(e.facts, "media");
  const image = e.facts.image_url;
  let state: Record<string, unknown> = { ...e.state };
  const inlineUntil = Date.now() + e.inlineWaitMs;
  if (typeof state.sent_at !== "string") {
    const s = await startInsertMedia(c, media, image);
    state = { ...state, sent_at: new Date().toISOString(), ...(s.state === "task" ? { task: s.ref } : {}) };
    if (s.state === "inserted") return done(`${media} already holds ${image}`, { state });
  }
  const sentAt = state.sent_at as string;
  while (state.task) {
    if (Date.now() - Date.parse(sentAt) > c.timings.taskTimeoutMs)
      throw new RedfishError(
        "timeout",
        `The InsertMedia task at ${(state.task as TaskRef).monitor} did not finish within ${secondsSince(sentAt)} s`,
      );
    const p = await pollTask(c, state.task as TaskRef);
    if (p.state === "done") {
      if (p.answer.status >= 300) c.expect(p.answer, "GET", (state.task as TaskRef).monitor, "media_refused");
      state = { ...state, task: undefined, task_done_at: new Date().toISOString() };
      break;
    }
    state = { ...state, task: p.ref };
    if (Date.now() + p.retryAfterMs > inlineUntil)
      return {
        kind: "wait",
        message: `InsertMedia accepted (202): task ${p.ref.monitor} running (${p.ref.polls} polls)`,
        state,
        retryInMs: p.retryAfterMs,
      };
    await c.pause(p.retryAfterMs);
  }
  const poll = Math.min(2_000, c.timings.powerPollMs);
  for (let i = 0; ; i++) {
    if (await mediaShows(c, media, image, i > 0 || state.task_done_at ? "media_mount_delay" : undefined)) {
      return done(`${image} inserted on ${media} (${secondsSince(sentAt)} s)`, { state: { ...state, task: undefined } });
    }
    const since = typeof state.task_done_at === "string" ? state.task_done_at : sentAt;
    if (Date.now() - Date.parse(since) > 30_000)
      throw new RedfishError("media_refused", `${media} accepted ${image} but shows no media inserted ${secondsSince(since)} s later`, {
        path: media,
      });
    if (Date.now() + poll > inlineUntil) return { kind: "wait", message: `Waiting for ${media} to show the image`, state, retryInMs: poll };
    await c.pause(poll);
  }
}

async function boot(e: StepEnv): Promise<StepOutcome> {
  const c = await e.bmc();
  const r = await setOneTimeCdBoot(c, need(e.facts, "system"));
  return done(`BootSourceOverrideEnabled Once, target ${r.target}${r.via !== e.facts.system ? ` (through ${r.via})` : ""}`, {
    facts: { boot_target: r.target },
  });
}

async function waitForAgent(e: StepEnv): Promise<StepOutcome> {
  const since = e.facts.powered_on_at ?? (typeof e.state.since === "string" ? e.state.since : new Date().toISOString());
  const seen = await e.agentSeenAt();
  if (seen && seen.getTime() > Date.parse(since))
    return done(`The agent was heard from ${Math.round((seen.getTime() - Date.parse(since)) / 1000)} s after the power-on`, {
      state: { since },
    });
  const waited = secondsSince(since);
  if (waited * 1000 > e.agentTimeoutMs)
    throw new AgentTimeout(`The node's agent did not register within ${Math.round(e.agentTimeoutMs / 60_000)} min of the power-on`);
  return {
    kind: "wait",
    message: `Booting ${e.facts.image_url}: waiting for the agent (${waited} s since the power-on)`,
    state: { since },
    retryInMs: 5_000,
  };
}

export const STEP_WORK: Record<ProvisioningStep, (e: StepEnv) => Promise<StepOutcome>> = {
  discover,
  power_off: (e) => power(e, "off"),
  eject_media: eject,
  insert_media: insert,
  boot_override: boot,
  power_on: (e) => power(e, "on"),
  wait_for_agent: waitForAgent,
};
