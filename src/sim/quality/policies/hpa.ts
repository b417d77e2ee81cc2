/**
 * The Kubernetes HPA algorithm on queue depth, as KEDA users run it: a
 * Prometheus trigger `sum(running + waiting)` with an `AverageValue` target per
 * replica, synced every 15 s. `desired = ceil(total / target)` unless
 * `total / (target · current)` is within the 0.1 tolerance. Default behaviour:
 * scale-up without stabilization, at most max(100 %, 4 pods) per 15 s;
 * scale-down at the highest recommendation of the last 300 s, at most 100 %
 * per 15 s. Minimum one replica.
 */
import { scrapedQueueDepth, type Policy, type PolicyContext } from "../policy.js";

export interface HpaOptions {
  readonly targetPerReplica: number;
  readonly initialReplicas: number;
  readonly tolerance?: number;
  readonly scaleDownStabilizationSeconds?: number;
  readonly maxReplicas?: number;
}

export function hpaPolicy(options: HpaOptions): Policy {
  const tolerance = options.tolerance ?? 0.1;
  const window = options.scaleDownStabilizationSeconds ?? 300;
  const max = options.maxReplicas ?? 1024;
  const history: { at: number; replicas: number }[] = [];
  return {
    name: `hpa-queue target=${options.targetPerReplica}`,
    family: "hpa",
    intervalSeconds: 15,
    initialReplicas: options.initialReplicas,
    decide(ctx: PolicyContext) {
      const current = Math.max(1, ctx.fleet.desiredReplicas);
      const total = scrapedQueueDepth(ctx);
      const ratio = total / (options.targetPerReplica * current);
      const raw = Math.abs(ratio - 1) <= tolerance ? current : Math.ceil(total / options.targetPerReplica);
      const recommendation = Math.min(max, Math.max(1, raw));
      history.push({ at: ctx.nowSeconds, replicas: recommendation });
      while ((history[0]?.at ?? Infinity) < ctx.nowSeconds - window) history.shift();
      let desired = recommendation;
      if (recommendation < current) desired = Math.min(current, Math.max(...history.map((h) => h.replicas)));
      const upLimit = Math.max(current * 2, current + 4);
      const downLimit = 0; // 100 % per period
      desired = Math.min(upLimit, Math.max(downLimit, desired));
      if (desired !== ctx.fleet.desiredReplicas) ctx.fleet.setDesired(desired, ctx.nowSeconds);
    },
  };
}
