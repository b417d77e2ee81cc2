/**
 * Numbers in the Kubernetes quantity format (`resource.Quantity`, DecimalSI),
 * as an external metrics API answers them: milli precision, then the
 * canonical form the API server itself prints ("3", "2500m", "12k").
 */

const bigSuffixes = ["", "k", "M", "G", "T", "P", "E"] as const;

/**
 * Formats `value` rounded to the nearest thousandth. Whole numbers take the
 * largest SI suffix that keeps the mantissa whole; fractions are millis.
 */
export function formatKubeQuantity(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`external metric value ${value} is not a finite number`);
  const millis = BigInt(Math.round(value * 1000));
  if (millis === 0n) return "0";
  const sign = millis < 0n ? "-" : "";
  const magnitude = millis < 0n ? -millis : millis;
  if (magnitude % 1000n !== 0n) return `${sign}${magnitude}m`;
  let whole = magnitude / 1000n;
  let exponent = 0;
  while (exponent < bigSuffixes.length - 1 && whole % 1000n === 0n) {
    whole /= 1000n;
    exponent += 1;
  }
  return `${sign}${whole}${bigSuffixes[exponent]}`;
}
