/**
 * A pass as plain data (maps as their entries) with every number to 12 significant digits: for comparing answers whose sums Prometheus
 * (or a Thanos Querier) added in another order, such as a range query's step against an instant query.
 */
export function toDigits(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) =>
      typeof v === "number" ? Number(v.toPrecision(12)) : v instanceof Map ? [...(v as Map<unknown, unknown>)] : v,
    ),
  );
}
