/**
 * Kubernetes resource quantities ("0.1", "500m", "2k", "1Ki", "1e3").
 * The scaler stores quantities as strings so the object round-trips unchanged
 * and reads them as numbers through `quantityValue`.
 */

const quantityPattern = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

const suffixMultipliers: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** Parses a quantity, or returns undefined when the text is not one. */
export function parseQuantity(text: string | number): number | undefined {
  if (typeof text === "number") return Number.isFinite(text) ? text : undefined;
  const match = quantityPattern.exec(text.trim());
  if (match === null) return undefined;
  const mantissa = Number(match[1]);
  const suffix = match[2] ?? "";
  const multiplier = suffix.startsWith("e") || suffix.startsWith("E") ? 10 ** Number(suffix.slice(1)) : suffixMultipliers[suffix];
  if (multiplier === undefined) return undefined;
  const value = mantissa * multiplier;
  return Number.isFinite(value) ? value : undefined;
}

/** The value of a quantity that validation already accepted. */
export function quantityValue(text: string | number): number {
  const value = parseQuantity(text);
  if (value === undefined) throw new Error(`quantity ${JSON.stringify(text)} was not validated`);
  return value;
}

/**
 * Formats a number for status: plain decimal, at most 3 fractional digits,
 * so "2400", "0.5" and "12.345" read as people expect.
 */
export function formatQuantity(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`cannot format ${value} as a quantity`);
  const rounded = Math.round(value * 1000) / 1000;
  return Object.is(rounded, -0) ? "0" : String(rounded);
}
