/**
 * When a role's latency buckets summed by the source (`RoleHistogram`, the
 * `roles` query plan) may stand for the merge of its pods' buckets
 * (`mergeHistograms` over the sampled pods with an established window).
 *
 * The sum covers every pod that answered the histogram's count in the window,
 * whether or not the observation counts it: a pod gone stale or deleted but
 * still inside the window, one past the 64-pod cap, one whose window has a
 * counter reset. It equals the merge only when the pods it covers are exactly
 * the pods the merge adds, on the engine the merge reads them from, each
 * with a usable count and sum (where a pod's sum was not asked, the role's sum
 * is finite and not negative: a pod's NaN sum makes it NaN), and the sum's
 * `+Inf` bucket is their counts' total (a pod whose bucket series were dropped, by a relabelling rule, while its
 * count was kept, shows there). Anything else is not proven: the source asks
 * those roles' pods for their own buckets, and the core reads an unproven sum
 * as unknown, never as a latency.
 *
 * What the proof cannot see: pods of one role and engine with different bucket
 * layouts (a rolling upgrade across an engine version that changed the
 * buckets), where the merge credits a pod lacking a bound with its next lower
 * one and the sum adds each bound over the pods that have it (both undercount,
 * moving the percentile up, the sum more); docs/prometheus-signals.md, "Cost".
 */
import { isAddable, isUsable } from "./histogram.js";
import type { LatencyField, PodSample, RoleHistogram, RoleSamples, WindowName } from "./types.js";

/** Relative slack between the `+Inf` bucket and the counts' total: the same increases, summed in another order. */
const totalSlack = 1e-9;

/** Whether `role` is the merge of the buckets of `pods` (the role's sampled pods) in `window`. */
export function roleSumHolds(
  role: RoleHistogram,
  pods: readonly PodSample[],
  window: WindowName,
  field: LatencyField,
): boolean {
  const merged = pods.filter((pod) => pod.windows[window].established);
  const covered = new Map(role.pods.map(({ pod, engine }) => [pod, engine]));
  // A pod listed twice answered for both engines: the merge reads one.
  if (covered.size !== role.pods.length || merged.length !== covered.size) return false;
  let total = 0;
  for (const pod of merged) {
    const histogram = pod.windows[window][field];
    if (covered.get(pod.pod) !== pod.engine || histogram === undefined || !isUsable(histogram)) return false;
    // A pod's sum not asked is carried by the role's: a pod's NaN or infinite sum shows there.
    if (histogram.sum === undefined && (role.sum === undefined || !isAddable(role.sum))) return false;
    total += histogram.count;
  }
  const last = role.buckets.at(-1);
  if (last === undefined) return true;
  return last.upperBound === Infinity && Math.abs(last.count - total) <= totalSlack * Math.max(1, total);
}

/**
 * Whether every summed histogram of the role stands for its sampled pods
 * (`sampledPods`): what the source checks to ask the pods' own buckets of the others.
 */
export function roleSumsHold(samples: RoleSamples, pods: readonly PodSample[]): boolean {
  for (const window of ["stable", "panic"] as const)
    for (const [field, role] of Object.entries(samples.roleHistograms?.[window] ?? {}))
      if (!roleSumHolds(role, pods, window, field as LatencyField)) return false;
  return true;
}
