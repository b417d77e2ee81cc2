/**
 * Exact non-negative rationals over bigint, for admission arithmetic that must
 * not depend on floating-point rounding (ratio bands, quantity comparisons).
 */

/** A rational `num / den` in lowest terms with `den > 0`. */
export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** Builds `num / den` in lowest terms; pre: den !== 0. */
export function rational(num: bigint, den: bigint = 1n): Rational {
  if (den === 0n) throw new Error("rational with a zero denominator");
  const sign = den < 0n ? -1n : 1n;
  const g = gcd(num, den) || 1n;
  return { num: (sign * num) / g, den: (sign * den) / g };
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`. */
export function compareRational(a: Rational, b: Rational): -1 | 0 | 1 {
  const left = a.num * b.den;
  const right = b.num * a.den;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Smallest integer `n` with `n >= r`. */
export function ceilRational(r: Rational): bigint {
  const q = r.num / r.den;
  // Stryker disable next-line EqualityOperator,ArithmeticOperator: in lowest terms zero has denominator 1, and both products differ from num exactly when den is not 1
  return r.num > 0n && q * r.den !== r.num ? q + 1n : q;
}

/** Largest integer `n` with `n <= r`. */
export function floorRational(r: Rational): bigint {
  const q = r.num / r.den;
  // Stryker disable next-line EqualityOperator,ArithmeticOperator: in lowest terms zero has denominator 1, and both products differ from num exactly when den is not 1
  return r.num < 0n && q * r.den !== r.num ? q - 1n : q;
}
