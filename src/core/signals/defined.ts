/** Optional-field helpers: an absent field means "not measured", so undefined is never stored. */

export type DefinedFields<T> = { [K in keyof T]?: Exclude<T[K], undefined> };

/** Copies the fields whose value is defined; spread the result into an object with optional fields. */
export function definedFields<T extends Record<string, unknown>>(fields: T): DefinedFields<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) out[key] = value;
  }
  return out as DefinedFields<T>;
}

/** The sum of the defined values, or undefined when none is defined (a missing sum is not 0). */
export function sumDefined(values: readonly (number | undefined)[]): number | undefined {
  let total: number | undefined;
  for (const value of values) {
    if (value !== undefined) total = (total ?? 0) + value;
  }
  return total;
}

/** The mean of the defined values, or undefined when none is defined. */
export function meanDefined(values: readonly (number | undefined)[]): number | undefined {
  const present = values.filter((value): value is number => value !== undefined);
  return present.length === 0 ? undefined : present.reduce((total, value) => total + value, 0) / present.length;
}
