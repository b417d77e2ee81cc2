/**
 * The shorter window's counter resets, read from the longer window's where it saw none (the `roles` and
 * `native` plans; docs/prometheus-signals.md, "The shorter window's resets").
 *
 * A pass asks `resets()` of each scaler's longer window first. The shorter window's samples are the newest
 * of the longer window's, so its consecutive pairs are some of the longer window's pairs: where a pod's
 * longer window saw no reset, its shorter one saw none either. A role with a pod whose longer window saw a
 * reset is asked its shorter window's resets (`resetParts`, four queries whatever the number of roles); the
 * other roles' pods take the longer window's reading, zero resets and the counter groups present in it.
 *
 * The one difference from asking: a group whose every counter stopped between the starts of the two
 * windows, with no counter of the pod going down in the longer one, reads present in the shorter window
 * where asking would read it absent. The absent-counter rule (core/signals/absent-counter.ts) then reads
 * an absent first-use counter as unknown, not as zero, until the longer window passes.
 */
import { cellOf, podsByRole, roleKey, windowSeconds, type PassAcc, type PodAcc } from "./pass-acc.js";
import type { ScalerSamplingInput } from "./source.js";

/** A scaler's two windows in whole seconds, the longer first (the panic window may be the longer). */
export function longerAndShorter(s: ScalerSamplingInput): { readonly longer: number; readonly shorter: number } {
  const stable = windowSeconds(s.stableWindowSeconds);
  const panic = windowSeconds(s.panicWindowSeconds);
  return { longer: Math.max(stable, panic), shorter: Math.min(stable, panic) };
}

/** The scalers, each with the roles a pod of which saw a reset in the longer window: their shorter window's resets are asked. */
export function rolesWithLongerWindowResets(
  scalers: readonly ScalerSamplingInput[],
  acc: PassAcc,
): ScalerSamplingInput[] {
  const byRole = podsByRole(acc);
  const out: ScalerSamplingInput[] = [];
  for (const s of scalers) {
    const { longer, shorter } = longerAndShorter(s);
    if (longer === shorter) continue;
    const roles = s.roles.filter((role) =>
      (byRole.get(roleKey(s.namespace, s.deployment, role)) ?? []).some(
        (pod) => (pod.windows.get(longer)?.resets ?? 0) > 0,
      ),
    );
    if (roles.length > 0) out.push({ ...s, roles });
  }
  return out;
}

/**
 * Gives the shorter window of every pod of the scalers' roles, but those of `asked`, the longer window's
 * reading: zero resets and the groups present. A pod whose longer window has no reading (no counter
 * sampled in it) has none in the shorter one either, and a pod without a shorter window is left without.
 */
export function shorterFromLonger(
  scalers: readonly ScalerSamplingInput[],
  acc: PassAcc,
  asked: readonly ScalerSamplingInput[],
): void {
  const byRole = podsByRole(acc);
  const skip = new Set(asked.flatMap((s) => s.roles.map((r) => roleKey(s.namespace, s.deployment, r))));
  for (const s of scalers) {
    const { longer, shorter } = longerAndShorter(s);
    if (longer === shorter) continue;
    for (const role of s.roles) {
      const key = roleKey(s.namespace, s.deployment, role);
      if (skip.has(key)) continue;
      for (const pod of byRole.get(key) ?? []) {
        const from = pod.windows.get(longer);
        const to = pod.windows.get(shorter);
        if (to === undefined) continue;
        // Another scaler's longer window of the same length may have answered for this pod (a query's
        // selection is a cross product): the reading is replaced, not added to.
        if (from?.resets === undefined) delete to.resets;
        else to.resets = from.resets;
        to.present = new Set(from?.present);
      }
    }
  }
}

/**
 * Empties the shorter window's resets and groups present of the pods of these scalers' roles, before the
 * answers asked for them are read; returns the cells (`cellOf`) those answers are read into.
 */
export function clearShorterWindowResets(scalers: readonly ScalerSamplingInput[], acc: PassAcc): Set<string> {
  const byRole = podsByRole(acc);
  const cells = new Set<string>();
  for (const s of scalers) {
    const { shorter } = longerAndShorter(s);
    for (const role of s.roles) {
      const key = roleKey(s.namespace, s.deployment, role);
      cells.add(cellOf(key, shorter));
      for (const pod of byRole.get(key) ?? []) clearResets(pod, shorter);
    }
  }
  return cells;
}

function clearResets(pod: PodAcc, w: number): void {
  const win = pod.windows.get(w);
  if (win === undefined) return;
  delete win.resets;
  win.present = new Set();
}
