/**
 * What the simulated-time loop asks of a scaling policy. A policy reads the
 * fleet (as its real counterpart would read it) and sets the desired count.
 */
import type { QualityFleet } from "./cluster.js";
import type { ScrapeHistory } from "./observations.js";

export interface PolicyContext {
  readonly nowSeconds: number;
  readonly fleet: QualityFleet;
  /** Scrape history per pod name (what Prometheus holds). */
  readonly scrapes: ReadonlyMap<string, ScrapeHistory>;
  /** Unix ms of simulated time zero. */
  readonly epochMs: number;
}

export interface Policy {
  /** Shown in tables, e.g. `hpa-queue target=16`. */
  readonly name: string;
  /** The family on a frontier: `static`, `hpa`, `knative`, `oracle`, `mds-scaler`. */
  readonly family: string;
  /** Seconds between decisions; the loop calls `decide` at every multiple. */
  readonly intervalSeconds: number;
  /** The warm fleet at time zero: a count for a one-role fleet, or one per role name. */
  readonly initialReplicas: number | Readonly<Record<string, number>>;
  /** The scaler role names it drives, when it names roles (mds-scaler); checked against the fleet's roles. */
  readonly roles?: readonly string[];
  /** Called once before the first step (schedules). */
  start?(fleet: QualityFleet): void;
  /** Called every second (policies that average their own samples). */
  sample?(ctx: PolicyContext): void;
  decide(ctx: PolicyContext): void;
  /** A short account of what drove the run (e.g. the planner's reasons by share of passes). */
  notes?(): string;
}

/** Sum of running + waiting requests in the newest scrape of every ready pod (what a PromQL sum returns). */
export function scrapedQueueDepth(ctx: PolicyContext): number {
  let total = 0;
  for (const r of ctx.fleet.replicas) {
    if (r.phase !== "Ready") continue;
    const newest = ctx.scrapes.get(r.name)?.newest();
    if (newest !== undefined) total += newest.running + newest.waiting;
  }
  return total;
}
