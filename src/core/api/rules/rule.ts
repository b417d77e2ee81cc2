/** The shape every cross-field admission rule has; `./index.ts` lists them all. */
import type { Problem } from "../problem.js";
import type { SpecView } from "./view.js";

export interface RuleContext {
  /** The spec under review, read tolerantly. */
  readonly spec: SpecView;
  /** The stored spec on update; absent on create. */
  readonly old?: SpecView;
}

export interface Rule {
  /** Stable id, carried by each problem the rule reports. */
  readonly id: string;
  /** One line for docs/api.md. */
  readonly summary: string;
  check(ctx: RuleContext): Problem[];
}
