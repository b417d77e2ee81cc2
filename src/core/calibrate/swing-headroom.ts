/**
 * Headroom for a demand swing: the per-replica figure lowered so that a minute carrying `swing` × the three
 * before it stays below the load where calibrate saw the targets break. TokenThroughput keeps the load per
 * ready replica at or below its target, so such a minute meets up to `swing` × the target on the replicas it
 * had while new ones start; the target fits when it is at most capacity ÷ swing.
 *
 * The docs' steps for replacing a fixed fleet ask for it with the swing they let through (`keepFleetAboveSwing`,
 * 1.65): they replace the fleet only where the day before swung at most that, and the days that missed had
 * swung more than the day before (docs/quality.md, twenty-fourth run).
 */
import { roundDownFigure } from "./bands.js";

/** The smallest swing headroom can be asked for: 1 is no swing, the figure as it is. */
export const minHeadroomSwing = 1;

/**
 * Example: a figure of 6550 tok/s per replica whose targets broke from 6990 leaves room for a jump of 1.07 ×
 * only; for 1.65 × it becomes 6990 ÷ 1.65 = 4236.4, written 4230. A figure already below capacity ÷ swing
 * stays as it is (5190 with a capacity of 9000: 9000 ÷ 1.65 = 5454 leaves it at 5190).
 */
export function figureForSwing(figure: number, capacityTokensPerSecondPerReplica: number, swing: number): number {
  return Math.min(figure, roundDownFigure(capacityTokensPerSecondPerReplica / swing));
}
