/**
 * The smallest fleet for which a check holds, where holding only gets easier as the fleet grows
 * (attainment of a static fleet): sizes from `from`, each the next by `grow`, until one holds, then
 * bisection between the largest that failed (0 when none did) and it. Every size is checked at most
 * once, in that order, so a caller that records each check sees exactly the fleets tried.
 */
export function smallestHolding(
  holds: (replicas: number) => boolean,
  search: { readonly from: number; readonly limit: number; readonly grow: (replicas: number) => number },
): number | undefined {
  let failing = 0;
  let passing: number | undefined;
  for (let n = search.from; n <= search.limit; n = search.grow(n)) {
    if (holds(n)) {
      passing = n;
      break;
    }
    failing = n;
  }
  if (passing === undefined) return undefined;
  while (passing - failing > 1) {
    const mid = Math.floor((failing + passing) / 2);
    if (holds(mid)) passing = mid;
    else failing = mid;
  }
  return passing;
}

/** Doubling from one replica: the search for a fleet with no better first guess. */
export const doubling = (replicas: number): number => 2 * replicas;
