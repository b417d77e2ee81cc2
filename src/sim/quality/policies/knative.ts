/**
 * A Knative-style concurrency autoscaler (KPA): in-flight requests sampled
 * every second, averaged over a 60 s stable and a 6 s panic window, decided
 * every 2 s. `desired = ceil(average / target)`. Panic starts when the panic
 * window wants at least twice the ready pods and lasts until a stable window
 * passes without that; in panic the fleet never shrinks. Scale-down is at most
 * half the ready pods per decision; minimum one replica.
 */
import type { Policy, PolicyContext } from "../policy.js";

export interface KnativeOptions {
  readonly targetPerReplica: number;
  readonly initialReplicas: number;
  readonly stableWindowSeconds?: number;
  readonly panicWindowSeconds?: number;
  readonly panicThreshold?: number;
  readonly maxScaleDownRate?: number;
  readonly maxReplicas?: number;
}

export function knativePolicy(options: KnativeOptions): Policy {
  const stable = options.stableWindowSeconds ?? 60;
  const panicWindow = options.panicWindowSeconds ?? 6;
  const threshold = options.panicThreshold ?? 2;
  const downRate = options.maxScaleDownRate ?? 2;
  const max = options.maxReplicas ?? 1024;
  const samples: { at: number; concurrency: number }[] = [];
  let panicSince: number | undefined;
  let panicDesired = 0;
  const average = (now: number, window: number): number => {
    const inWindow = samples.filter((s) => s.at > now - window);
    return inWindow.length === 0 ? 0 : inWindow.reduce((a, s) => a + s.concurrency, 0) / inWindow.length;
  };
  return {
    name: `knative target=${options.targetPerReplica}`,
    family: "knative",
    intervalSeconds: 2,
    initialReplicas: options.initialReplicas,
    sample(ctx: PolicyContext) {
      samples.push({ at: ctx.nowSeconds, concurrency: ctx.fleet.outstanding() });
      while ((samples[0]?.at ?? Infinity) <= ctx.nowSeconds - stable) samples.shift();
    },
    decide(ctx: PolicyContext) {
      const ready = Math.max(1, ctx.fleet.count("Ready"));
      const wantStable = Math.ceil(average(ctx.nowSeconds, stable) / options.targetPerReplica);
      const wantPanic = Math.ceil(average(ctx.nowSeconds, panicWindow) / options.targetPerReplica);
      if (wantPanic / ready >= threshold) {
        if (panicSince === undefined) panicDesired = ctx.fleet.desiredReplicas;
        panicSince = ctx.nowSeconds;
      } else if (panicSince !== undefined && ctx.nowSeconds - panicSince >= stable) panicSince = undefined;
      let desired = wantStable;
      if (panicSince !== undefined) {
        panicDesired = Math.max(panicDesired, wantPanic, wantStable);
        desired = panicDesired;
      }
      desired = Math.max(desired, Math.ceil(ready / downRate));
      desired = Math.min(max, Math.max(1, desired));
      if (desired !== ctx.fleet.desiredReplicas) ctx.fleet.setDesired(desired, ctx.nowSeconds);
    },
  };
}
