/**
 * The queue-time target (`queueTimeTargetMilliseconds`, an mds-scaler
 * extension of TokenThroughput's parameters; docs/algorithms.md, "The
 * queue-time target"). The specification guards TTFT, which is waiting plus
 * the prompt's own prefill; only the waiting grows with load, and a TTFT
 * target sized for long prompts leaves room for more waiting than the SLO of a
 * short prompt has. A user whose SLO gives waiting its own budget writes it
 * here, and the latency guard treats the role's p95 queue time as one more
 * guarded latency: above the target no scale-down, above 1.2 times it at least
 * one more replica, as for TTFT and ITL.
 *
 * Queue time is judged only where every sampled pod exports it
 * (`roleWaiting`): where it is unknown the TTFT reading is literal
 * (`ttft-reading.ts`), so the unknown waiting is still guarded through TTFT.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { quantityValue } from "../api/quantity.js";
import type { TokenThroughputParams } from "../api/scaler.js";
import type { RoleObservation } from "../signals/types.js";
import { roleWaiting } from "./ttft-reading.js";

/** The kinds that wait for a first token, and so are judged on queue time: the guard and the exported target read this. */
export function judgedOnQueueTime(kind: RoleKind): boolean {
  return kind === "Prefill" || kind === "Server";
}

/** The guarded queue time: the p95 waiting as the buckets name it and its target, both in ms. */
export interface GuardedQueueTime {
  readonly milliseconds: number;
  readonly targetMilliseconds: number;
}

/**
 * The role's queue time against its target, when the scaler writes one, the kind waits for its first token
 * (Prefill, Server) and the waiting is known; undefined otherwise.
 * Example: target 1,000 ms, p95 queue time in (1,000, 1,500] estimated at 1,400 ms → 1.4 × the target.
 */
export function guardedQueueTime(
  kind: RoleKind,
  observation: RoleObservation,
  params: TokenThroughputParams,
): GuardedQueueTime | undefined {
  if (params.queueTimeTargetMilliseconds === undefined || !judgedOnQueueTime(kind)) return undefined;
  const waiting = roleWaiting(observation);
  if ("unknown" in waiting) return undefined;
  return { milliseconds: waiting.milliseconds, targetMilliseconds: quantityValue(params.queueTimeTargetMilliseconds) };
}

/** The words the role's `latencyGuard` status adds for the queue-time target. */
export function queueTimeWords(queue: GuardedQueueTime): string {
  const relation = queue.milliseconds > queue.targetMilliseconds ? "above" : "within";
  return `p95 queue time ${Math.round(queue.milliseconds)} ms is ${relation} its target ${Math.round(queue.targetMilliseconds)} ms`;
}
