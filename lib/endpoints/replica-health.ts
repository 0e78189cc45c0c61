/**
 * When a replica stops being trusted (pure constants, shared by the reconciler, the metrics
 * ingest and the docs):
 * - a ready replica that sent no sample for STALE_AFTER_S is marked unhealthy ("silent");
 * - an unhealthy replica (silent, or reporting healthy=false) is replaced after REPLACE_UNHEALTHY_AFTER_S;
 * - a starting replica that never reported healthy within START_TIMEOUT_S is replaced (model
 *   weights can take minutes to load, so this is generous);
 * - a replica whose node leaves service (quarantined, draining, maintenance, offline) or whose GPU
 *   turns unhealthy is replaced at once.
 */
export const STALE_AFTER_S = 60;
export const REPLACE_UNHEALTHY_AFTER_S = 180;
export const START_TIMEOUT_S = 900;
