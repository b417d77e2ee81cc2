/**
 * Prometheus' duration syntax, as a PodMonitor's `interval` or a scrape config's `scrape_interval` is written:
 * whole numbers with units from the largest to the smallest, each at most once (`15s`, `1m30s`, `500ms`,
 * `1h`); the units y (365 days), w, d, h, m, s and ms, as Prometheus' own parser reads them.
 */
const durationPattern = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const unitSeconds = [365 * 86_400, 7 * 86_400, 86_400, 3_600, 60, 1, 0.001] as const;

/**
 * The seconds a duration stands for, or undefined where the text is not a duration above zero.
 * Example: "1m30s" → 90; "500ms" → 0.5; "15" → undefined (no unit); "0s" → undefined.
 */
export function durationSeconds(text: string): number | undefined {
  const match = durationPattern.exec(text);
  // The empty text matches with every unit absent; it sums to zero, which is refused below.
  if (match === null) return undefined;
  const seconds = unitSeconds.reduce((total, unit, i) => total + Number(match[i + 1] ?? 0) * unit, 0);
  return seconds > 0 ? seconds : undefined;
}
