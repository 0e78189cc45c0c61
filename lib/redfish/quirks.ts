// Every departure from DSP0266's happy path that the client works around, each a named retry with
// its reason beside it (the way OpenStack's sushy documents its workarounds). The exchange log of a
// provisioning step names the quirk that caused each repeated request, so an operator reading the
// node page sees why a request was sent twice (pure).

export const QUIRKS = {
  root_requires_auth:
    "DSP0266 lets anyone read the service root, but some firmware answers 401 there before login: read it again with basic auth",
  sessions_link_missing:
    "The service root has no Links.Sessions (required since Redfish 1.6): use SessionService's Sessions, else the standard /redfish/v1/SessionService/Sessions (sushy guesses the same path)",
  session_login_unavailable:
    "The BMC has no working SessionService (404/405/501, a 5xx, or no X-Auth-Token in the answer): send HTTP basic auth with every request, as sushy's SessionOrBasicAuth does",
  session_login_refused:
    "The SessionService refused the login (401/403): some BMCs only accept basic auth for the account; try it once before calling the credentials refused (sushy falls back the same way)",
  session_expired:
    "A 401 on a session that worked: the BMC expired or dropped it (session timeouts, BMC restarts); log in once more and repeat the request, once",
  weak_etag_rejected:
    'The BMC sent a weak ETag (W/"…") on GET but compares If-Match strongly and answered 412: repeat with the strong form (sushy\'s eTag handler)',
  stale_etag:
    "412 with the ETag we read: the resource changed since, or the BMC computes ETags over another representation; read it again and repeat with the fresh ETag",
  etag_never_matches:
    "412 even with a freshly read ETag: the BMC's ETags do not survive its own PATCH handling; repeat without If-Match, as sushy's last attempt does",
  if_match_required: "428 Precondition Required without an ETag on GET: repeat with If-Match: *",
  eject_needs_empty_body: "HPE iLO answers 400/415 to an EjectMedia POST without a body: repeat with {} (sushy)",
  transfer_protocol_required:
    "Some BMCs require TransferProtocolType on InsertMedia (ActionParameterMissing naming it): repeat with the image URL's scheme (sushy)",
  media_by_patch:
    "Virtual media without InsertMedia/EjectMedia actions whose Allow header lists PATCH (Lenovo SD530 and similar): PATCH Image and Inserted instead (sushy)",
  media_types_missing: "VirtualMedia without MediaTypes (older firmware): take the device whose Id or Name says CD or DVD",
  media_mount_delay:
    "Some BMCs mount an inserted image in the background: read the device again for a few seconds before calling the image refused",
  supermicro_usb_cd:
    "SuperMicro X11/X12 present virtual media as a USB CD: booting Cd fails even with media inserted; use UsbCd when the BMC allows it (sushy)",
  cd_target_missing: "The BMC lists no Cd boot target but offers UsbCd: its virtual CD is a USB device",
  boot_via_settings:
    "The system changes Boot through its @Redfish.Settings resource (applied at the next reset), as that resource's Boot section shows: PATCH it there (sushy)",
  reset_allowable_values_missing:
    "No ResetType@Redfish.AllowableValues and no @Redfish.ActionInfo: assume the standard ResetType values, as sushy does",
  reset_refused_in_state:
    "A reset answered 400/409 while the system is already in the state asked for (some BMCs refuse On when on): read PowerState and accept it when it matches",
  restart_when_off: "ForceRestart on a powered-off system is refused by many BMCs: power it on instead",
  task_monitor_is_task:
    "Location names the Task resource rather than a task monitor: read its TaskState instead of waiting for the monitor to stop answering 202",
  task_monitor_gone:
    "The task monitor disappeared (404) after the task started, before it returned an outcome: read the Task resource, else judge by the resource's new state",
  not_ready:
    "The BMC says it is busy (503, or Base ServiceTemporarilyUnavailable / ResourceInUse, iLO UnableToModifyDuringSystemPOST): wait (its Retry-After when given) and repeat",
  server_error:
    "5xx on an idempotent request (GET, PATCH, DELETE): BMCs fail transiently under load; repeat with backoff (sushy repeats GETs ten times)",
  connection_lost:
    "The BMC refused or dropped the connection before answering (BMCs restart their web servers): repeat with backoff; a POST only when it cannot have arrived",
} as const;
export type QuirkId = keyof typeof QUIRKS;

/** MessageIds (registry prefix and version dropped) that mean "not now", not "no". */
const NOT_READY_MESSAGES = new Set([
  "ServiceTemporarilyUnavailable",
  "ServiceInUnknownState",
  "ResourceInUse",
  "UnableToModifyDuringSystemPOST",
]);

/** The MessageIds and text of a Redfish error answer (`{"error": {code, message, "@Message.ExtendedInfo": [...]}}`). */
export function redfishMessages(json: unknown): { ids: string[]; text: string } {
  const error = (json as { error?: Record<string, unknown> } | undefined)?.error;
  if (!error || typeof error !== "object") return { ids: [], text: "" };
  const info = Array.isArray(error["@Message.ExtendedInfo"]) ? (error["@Message.ExtendedInfo"] as Array<Record<string, unknown>>) : [];
  const ids = [error.code, ...info.map((m) => m.MessageId)].filter((x): x is string => typeof x === "string");
  const texts = info.map((m) => m.Message).filter((x): x is string => typeof x === "string");
  const text = (texts.length ? texts : [error.message]).filter((x): x is string => typeof x === "string").join(" ");
  return { ids, text: text.slice(0, 500) };
}

/** `Base.1.8.ResourceInUse` → `ResourceInUse`. */
const messageKey = (id: string) => id.split(".").pop() ?? id;

/** Whether an answer says "not ready yet" rather than "refused". */
export function isNotReady(status: number, json: unknown): boolean {
  if (status === 503) return true;
  if (status !== 400 && status !== 409 && status !== 500) return false;
  return redfishMessages(json).ids.some((id) => NOT_READY_MESSAGES.has(messageKey(id)));
}

/** Whether an InsertMedia refusal says it wants TransferProtocolType (sushy's is_transfer_protocol_required). */
export function wantsTransferProtocol(status: number, json: unknown): boolean {
  if (status !== 400) return false;
  const error = (json as { error?: Record<string, unknown> } | undefined)?.error;
  const info = Array.isArray(error?.["@Message.ExtendedInfo"]) ? (error["@Message.ExtendedInfo"] as Array<Record<string, unknown>>) : [];
  return info.some(
    (m) =>
      typeof m.MessageId === "string" &&
      /(ActionParameterMissing|PropertyMissing)$/.test(m.MessageId) &&
      JSON.stringify([m.RelatedProperties, m.MessageArgs]).includes("TransferProtocolType"),
  );
}

/** Retry-After as milliseconds (seconds or an HTTP date), capped; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, capMs: number, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const v = header.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, capMs);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), capMs);
}

/** The strong form of a weak ETag (`W/"abc"` → `"abc"`), or null when it is not weak. */
export function strongEtag(etag: string): string | null {
  const m = /^W\/(".*")$/.exec(etag.trim());
  return m ? m[1]! : null;
}
