/**
 * Which roles a pass asks again after its first answers (source.ts, `followUp`): the pods of roles whose
 * summed buckets the core would not use, the stable window of quiet roles, and under the `native` plan the
 * classic sums of windows whose native sums are missing; and the roles reported as missing them.
 */
import { holdsObservation, sampledPods, staleAfterSeconds } from "../../core/signals/observe.js";
import { roleSumsHold } from "../../core/signals/role-histogram.js";
import type { RoleSamples, SignalFamily } from "../../core/signals/types.js";
import {
  cellOf,
  classicHistogramsByRole,
  fieldOfHistogram,
  histogramNames,
  missingHistograms,
  podsByRole,
  roleKey,
  windowSeconds,
  type HistogramName,
  type PassAcc,
} from "./pass-acc.js";
import type { ScalerSamplingInput } from "./source.js";

/**
 * The scalers, each with the roles whose stable window's summed buckets the
 * core will read and the pass has not asked: a role read from its sums (not
 * per pod, not unproven) whose panic window holds no observation of a latency
 * field of a family the pass could read and whose stable window, another
 * window, holds one (`holdsObservation`: the pods' counts of both windows are
 * in the first answers).
 */
export function quietRoles(
  scalers: readonly ScalerSamplingInput[],
  out: ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>,
  atUnixMs: number,
  acc: PassAcc,
  perPod: ReadonlySet<string>,
  unproven: readonly ScalerSamplingInput[],
  unknownFamilies: Partial<Record<SignalFamily, string>>,
): ScalerSamplingInput[] {
  const excluded = new Set(unproven.flatMap((s) => s.roles.map((r) => roleKey(s.namespace, s.deployment, r))));
  const fields = histogramNames
    .filter((h) => unknownFamilies[h === "itl" ? "itl" : "ttft"] === undefined)
    .map((h) => fieldOfHistogram[h]);
  const quiet: ScalerSamplingInput[] = [];
  for (const s of scalers) {
    const stable = windowSeconds(s.stableWindowSeconds);
    if (stable === windowSeconds(s.panicWindowSeconds)) continue;
    const stale = staleAfterSeconds(s.intervalSeconds);
    const roles = s.roles.filter((role) => {
      const key = roleKey(s.namespace, s.deployment, role);
      if (perPod.has(key) || excluded.has(key) || acc.summed.get(key)?.has(stable) === true) return false;
      const samples = out.get(s.key)?.get(role);
      if (samples === undefined || samples.queryFailed !== undefined) return false;
      const pods = sampledPods(samples.pods, atUnixMs, stale);
      // Where the stable window holds no observation either (the counts say so), latency is unknown whatever its
      // buckets.
      return fields.some((field) => !holdsObservation(pods, "panic", field) && holdsObservation(pods, "stable", field));
    });
    if (roles.length > 0) quiet.push({ ...s, roles });
  }
  return quiet;
}

/** The scalers with the roles (`roleKey`) `keep` accepts, and without those left with none. */
export function filterRoles(
  scalers: readonly ScalerSamplingInput[],
  keep: (roleKey: string) => boolean,
): ScalerSamplingInput[] {
  return scalers
    .map((s) => ({ ...s, roles: s.roles.filter((r) => keep(roleKey(s.namespace, s.deployment, r))) }))
    .filter((s) => s.roles.length > 0);
}

/** The scalers, each with the roles whose summed buckets the core would not use (`roleSumsHold`). */
export function unprovenRoles(
  scalers: readonly ScalerSamplingInput[],
  out: ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>,
  atUnixMs: number,
): ScalerSamplingInput[] {
  const unproven: ScalerSamplingInput[] = [];
  for (const s of scalers) {
    const stale = staleAfterSeconds(s.intervalSeconds);
    const roles = s.roles.filter((role) => {
      const samples = out.get(s.key)?.get(role);
      return samples !== undefined && !roleSumsHold(samples, sampledPods(samples.pods, atUnixMs, stale));
    });
    if (roles.length > 0) unproven.push({ ...s, roles });
  }
  return unproven;
}

/**
 * `native` plan, after a pass's asks: each role with a window whose native sums were missing, as
 * `<scaler key> <role> (<fields>)`. Every such window has been read from the classic series by then (the
 * follow-ups end only when none is left), so `acc.classic` names them all. What a user who chose the plan
 * needs to see: Prometheus is not converting the histograms these roles' pods expose.
 */
export function rolesWithoutNativeSums(scalers: readonly ScalerSamplingInput[], acc: PassAcc): string[] {
  const classicOf = classicHistogramsByRole(acc);
  const out: string[] = [];
  for (const s of scalers)
    for (const role of s.roles) {
      const missing = classicOf.get(roleKey(s.namespace, s.deployment, role));
      if (missing === undefined || missing.size === 0) continue;
      const fields = histogramNames.filter((h) => missing.has(h)).map((h) => fieldOfHistogram[h]);
      out.push(`${s.key} ${role} (${fields.join(", ")})`);
    }
  return out;
}

/**
 * What a follow-up reads from the classic series summed by role (`native` plan): the windows whose native sums
 * are missing, and the stable window of a quiet role whose native sums were missing in its panic window (its
 * pods' histograms are not converted either), read from the classic series at once; the other quiet roles.
 */
export function classicReads(
  missing: MissingNativeSums,
  quietAll: readonly ScalerSamplingInput[],
  acc: PassAcc,
): {
  readonly cells: Map<string, ReadonlySet<HistogramName>>;
  readonly stable: ScalerSamplingInput[];
  readonly quiet: ScalerSamplingInput[];
  readonly quietClassic: ScalerSamplingInput[];
} {
  const classicOf = classicHistogramsByRole(acc);
  const quiet = filterRoles(quietAll, (key) => !classicOf.has(key));
  const quietClassic = filterRoles(quietAll, (key) => classicOf.has(key));
  const cells = new Map(missing.cells);
  for (const s of quietClassic)
    for (const r of s.roles) {
      const key = roleKey(s.namespace, s.deployment, r);
      cells.set(cellOf(key, windowSeconds(s.stableWindowSeconds)), classicOf.get(key) ?? new Set());
    }
  return { cells, stable: [...missing.stable, ...quietClassic], quiet, quietClassic };
}

/** The windows of roles (not read per pod) whose native sums are missing, not yet read from the classic series. */
export interface MissingNativeSums {
  /** The scalers with the roles missing them in their panic window, and in their (other) stable window. */
  readonly panic: ScalerSamplingInput[];
  readonly stable: ScalerSamplingInput[];
  /** By `cellOf(roleKey, window)`, the histograms missing. */
  readonly cells: Map<string, ReadonlySet<HistogramName>>;
  /** The roles (`roleKey`) of those cells. */
  readonly roles: Set<string>;
}

export function missingNativeSums(
  scalers: readonly ScalerSamplingInput[],
  acc: PassAcc,
  perPod: ReadonlySet<string>,
): MissingNativeSums {
  const out: MissingNativeSums = { panic: [], stable: [], cells: new Map(), roles: new Set() };
  if (!acc.native) return out;
  const byRole = podsByRole(acc);
  for (const s of scalers) {
    const panic = windowSeconds(s.panicWindowSeconds);
    const inPanic: string[] = [];
    const inStable: string[] = [];
    for (const role of s.roles) {
      const key = roleKey(s.namespace, s.deployment, role);
      if (perPod.has(key)) continue;
      for (const w of acc.summed.get(key) ?? []) {
        const missing = missingHistograms(acc, key, byRole.get(key) ?? [], w);
        if (missing.length === 0) continue;
        out.cells.set(cellOf(key, w), new Set(missing));
        out.roles.add(key);
        (w === panic ? inPanic : inStable).push(role);
      }
    }
    if (inPanic.length > 0) out.panic.push({ ...s, roles: inPanic });
    if (inStable.length > 0) out.stable.push({ ...s, roles: inStable });
  }
  return out;
}
