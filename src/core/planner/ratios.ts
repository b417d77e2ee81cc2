/**
 * Ratio bands: the spec's ratios read as numbers, the tolerant band test, and
 * the connected components of roles joined by ratios. The projection onto the
 * bands is in `projection.ts`.
 */
import { quantityValue } from "../api/quantity.js";
import type { ScalerSpec } from "../api/scaler.js";

/** One `ratios[]` entry with its quantities read as numbers. */
export interface RatioBand {
  readonly numerator: string;
  readonly denominator: string;
  readonly min?: number;
  readonly max?: number;
  readonly target?: number;
}

/**
 * Allowed slack at a band edge. Ratios are written as decimals ("0.333" for
 * one in three), so a written edge can be off the intended fraction by half a
 * unit in the third decimal: 1/3 - 0.333 = 0.00033. The slack is that half
 * unit, shrunk for small ratios so it never exceeds 0.2% of the edge. With at
 * most 1024 replicas it never admits a whole extra replica.
 */
export function ratioTolerance(edge: number): number {
  return Math.min(5e-4, 2e-3 * edge);
}

/** Float noise allowed when comparing products of counts and factors. */
export const floatSlack = 1e-9;

export function lowFactor(band: RatioBand): number | undefined {
  return band.min === undefined ? undefined : band.min - ratioTolerance(band.min);
}

export function highFactor(band: RatioBand): number | undefined {
  return band.max === undefined ? undefined : band.max + ratioTolerance(band.max);
}

/** The spec's ratios between planned roles; a ratio naming another role constrains nothing. */
export function ratioBands(spec: ScalerSpec, plannedRoles: ReadonlySet<string>): RatioBand[] {
  const bands: RatioBand[] = [];
  for (const ratio of spec.ratios ?? []) {
    if (!plannedRoles.has(ratio.numeratorRole) || !plannedRoles.has(ratio.denominatorRole)) continue;
    if (ratio.numeratorRole === ratio.denominatorRole) continue;
    bands.push({
      numerator: ratio.numeratorRole,
      denominator: ratio.denominatorRole,
      ...(ratio.min === undefined ? {} : { min: quantityValue(ratio.min) }),
      ...(ratio.max === undefined ? {} : { max: quantityValue(ratio.max) }),
      ...(ratio.target === undefined ? {} : { target: quantityValue(ratio.target) }),
    });
  }
  return bands;
}

/** Whether `numerator / denominator` lies in the band, with the edge tolerance. */
export function bandSatisfied(band: RatioBand, numerator: number, denominator: number): boolean {
  if (denominator <= 0) return false;
  const low = lowFactor(band);
  if (low !== undefined && numerator < low * denominator - floatSlack) return false;
  const high = highFactor(band);
  if (high !== undefined && numerator > high * denominator + floatSlack) return false;
  return true;
}

/** Bands the vector violates (a role absent from the vector counts as 0). */
export function violatedBands(vector: Readonly<Record<string, number>>, bands: readonly RatioBand[]): RatioBand[] {
  return bands.filter((band) => !bandSatisfied(band, vector[band.numerator] ?? 0, vector[band.denominator] ?? 0));
}

/** `prefill/decode in [0.5, 2]` style text for messages. */
export function describeBand(band: RatioBand): string {
  const low = band.min === undefined ? "" : `>= ${band.min}`;
  const high = band.max === undefined ? "" : `<= ${band.max}`;
  return `${band.numerator}/${band.denominator} ${[low, high].filter((s) => s !== "").join(" and ")}`.trim();
}

/**
 * Connected components of the ratio graph, each listed in `roleNames` order,
 * components ordered by their first role. A role without ratios is alone.
 */
export function ratioComponents(roleNames: readonly string[], bands: readonly RatioBand[]): string[][] {
  const parent = new Map(roleNames.map((name) => [name, name] as const));
  const find = (name: string): string => {
    let root = name;
    while (parent.get(root) !== root) root = parent.get(root) ?? root;
    parent.set(name, root);
    return root;
  };
  for (const band of bands) {
    if (!parent.has(band.numerator) || !parent.has(band.denominator)) continue;
    const a = find(band.numerator);
    const b = find(band.denominator);
    if (a !== b) parent.set(b, a);
  }
  const groups = new Map<string, string[]>();
  for (const name of roleNames) {
    const root = find(name);
    const group = groups.get(root);
    if (group === undefined) groups.set(root, [name]);
    else group.push(name);
  }
  return [...groups.values()];
}
