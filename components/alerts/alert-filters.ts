import { ALERT_TYPE_LABELS } from "./alert-badges";

/** The choices of the alert lists' filters (operator and tenant planes). */
export const ALERT_FILTERS = {
  status: [
    ["", "Any status"],
    ["firing", "Firing"],
    ["resolved", "Resolved"],
  ] as Array<[string, string]>,
  severity: [
    ["", "Any severity"],
    ["critical", "Critical"],
    ["warning", "Warning"],
    ["info", "Info"],
  ] as Array<[string, string]>,
  type: [["", "Any type"], ...Object.entries(ALERT_TYPE_LABELS)] as Array<[string, string]>,
  group: [
    ["1", "Group repeats"],
    ["0", "Every alert"],
  ] as Array<[string, string]>,
  sort: [
    ["newest", "Most recent first"],
    ["oldest", "Oldest first"],
    ["severity", "Most severe first"],
    ["count", "Most repeated first"],
  ] as Array<[string, string]>,
};
