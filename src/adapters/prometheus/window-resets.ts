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
import { cellOf, podsByRole, roleKey, windowSeconds, type PassAcc, type WindowAcc } from "./pass-acc.js";
import type { ScalerSamplingInput } from "./source.js";

/** A scaler's two windows in whole seconds, the longer first (the panic window may be the longer). */
export function longerAndShorter(s: ScalerSamplingInput): { readonly longer: number; readonly shorter: number } {
  const stable = windowSeconds(s.stableWindowSeconds);
  const panic = windowSeconds(s.panicWindowSeconds);
  return { longer: Math.max(stable, panic), shorter: Math.min(stable, panic) };
}

/**
 * What `readShorterFromLonger` leaves to ask: the roles whose shorter window's resets are asked, and where they are
 * read.
 */
export interface ShorterWindowAsk {
  /** The scalers, each with the roles a pod of which saw a reset in the longer window. */
  readonly asked: ScalerSamplingInput[];
  /** The cells (`cellOf`) the asked answers are read into: each asked role's shorter window. */
  readonly cells: Set<string>;
}

/**
 * Per role of these scalers (those with two windows of different lengths): where no pod saw a reset in the
 * longer window, every pod's shorter window takes the longer window's reading, zero resets and the groups
 * present; otherwise the role is asked, and its pods' shorter windows are emptied for the answers. A pod
 * whose longer window has no reading (no counter sampled in it) has none in the shorter one either, and a
 * pod without a shorter window is left without.
 */
export function readShorterFromLonger(scalers: readonly ScalerSamplingInput[], acc: PassAcc): ShorterWindowAsk {
  const byRole = podsByRole(acc);
  const asked: ScalerSamplingInput[] = [];
  const cells = new Set<string>();
  for (const s of scalers) {
    const { longer, shorter } = longerAndShorter(s);
    if (longer === shorter) continue;
    const roles: string[] = [];
    for (const role of s.roles) {
      const key = roleKey(s.namespace, s.deployment, role);
      const pods = byRole.get(key) ?? [];
      if (pods.some((pod) => (pod.windows.get(longer)?.resets ?? 0) > 0)) {
        roles.push(role);
        cells.add(cellOf(key, shorter));
        for (const pod of pods) takeReading(pod.windows.get(shorter), undefined);
      } else for (const pod of pods) takeReading(pod.windows.get(shorter), pod.windows.get(longer));
    }
    if (roles.length > 0) asked.push({ ...s, roles });
  }
  return { asked, cells };
}

/**
 * The shorter window's resets and groups present, replaced by the longer window's (none where `from` is
 * undefined or read none): another scaler's longer window of the same length may have answered for this
 * pod (a query's selection is a cross product), and that reading is replaced, not added to.
 */
function takeReading(to: WindowAcc | undefined, from: WindowAcc | undefined): void {
  if (to === undefined) return;
  if (from?.resets === undefined) delete to.resets;
  else to.resets = from.resets;
  to.present = new Set(from?.present);
}
