/**
 * Kubernetes resource quantities ("0.1", "500m", "2k", "1Ki", "1e3").
 * The scaler stores quantities as strings so the object round-trips unchanged
 * and reads them as numbers through `quantityValue`, or exactly through
 * `parseQuantityExact` where admission must not round.
 *
 * Grammar (the Kubernetes one): an optionally signed decimal number followed
 * by at most one suffix: a binary SI suffix (Ki Mi Gi Ti Pi Ei), a decimal SI
 * suffix (n u m k M G T P E) or a decimal exponent (e3, E-2). No whitespace.
 */
import { rational, type Rational } from "./rational.js";

const quantityPattern = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** Powers of ten of the decimal SI suffixes. */
const decimalExponents: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
/** Powers of two of the binary SI suffixes. */
const binaryExponents: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** Exponents beyond this are refused so exact arithmetic stays small; no real setting needs them. */
const maxDecimalExponent = 64;
/** Kubernetes refuses quantities above 2^63 - 1. */
const maxQuantity = rational(2n ** 63n - 1n);

/** Why a text is not an accepted quantity, or undefined when it is one. */
export type QuantityError = "syntax" | "range";

/** Parses a quantity exactly, or explains why it is not one. */
export function parseQuantityChecked(text: string | number): { value: Rational } | { error: QuantityError } {
  if (typeof text === "number") {
    if (!Number.isSafeInteger(text)) return { error: Number.isFinite(text) ? "syntax" : "range" };
    return { value: rational(BigInt(text)) };
  }
  const match = quantityPattern.exec(text);
  if (match === null) return { error: "syntax" };
  // Stryker disable next-line StringLiteral: the pattern's first group always matches, so the fallback is never read
  const mantissaText = match[1] ?? "0";
  const suffix = match[2] ?? "";
  const negative = mantissaText.startsWith("-");
  const unsigned = mantissaText.replace(/^[+-]/, "");
  // split always gives the whole part; the pattern puts a digit in the whole part or the fraction, and BigInt("") is 0.
  const [whole, fraction = ""] = unsigned.split(".") as [string, string?];
  let value = rational(BigInt(whole + fraction) * (negative ? -1n : 1n), 10n ** BigInt(fraction.length));
  const binary = binaryExponents[suffix];
  // "E" alone is exa; "E3" is an exponent.
  const decimal = /^[eE][+-]?\d+$/.test(suffix) ? Number(suffix.slice(1)) : decimalExponents[suffix];
  if (binary !== undefined) {
    value = rational(value.num * 2n ** BigInt(binary), value.den);
  } else if (decimal !== undefined) {
    if (Math.abs(decimal) > maxDecimalExponent) return { error: "range" };
    value =
      decimal >= 0
        ? rational(value.num * 10n ** BigInt(decimal), value.den)
        : rational(value.num, value.den * 10n ** BigInt(-decimal));
  }
  const magnitude = value.num < 0n ? rational(-value.num, value.den) : value;
  if (magnitude.num * maxQuantity.den > maxQuantity.num * magnitude.den) return { error: "range" };
  return { value };
}

/** The exact value of a quantity, or undefined when the text is not one. */
export function parseQuantityExact(text: string | number): Rational | undefined {
  const result = parseQuantityChecked(text);
  return "value" in result ? result.value : undefined;
}

/** Parses a quantity, or returns undefined when the text is not one. */
export function parseQuantity(text: string | number): number | undefined {
  const exact = parseQuantityExact(text);
  if (exact === undefined) return undefined;
  const value = Number(exact.num) / Number(exact.den);
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
  // String(-0) is "0", so a small negative value rounds to "0", never "-0".
  return String(Math.round(value * 1000) / 1000);
}
