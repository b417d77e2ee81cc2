/** In-memory stand-ins for the external metrics server's ports, for its unit tests. */
import type { Access, Authorizer, Verdict } from "../../src/adapters/external-metrics/authorization.js";
import type { UserInfo } from "../../src/adapters/external-metrics/authentication.js";
import type { ScalerReader } from "../../src/adapters/external-metrics/values.js";

export class FakeScalerReader implements ScalerReader {
  constructor(
    public scalers: unknown[],
    public targets: Record<string, unknown> = {},
  ) {}
  async listScalers(): Promise<unknown[]> {
    return this.scalers;
  }
  async getTarget(namespace: string, name: string): Promise<unknown> {
    return this.targets[`${namespace}/${name}`];
  }
}

/** Allows the users it lists, per namespace and metric; records every question. */
export class FakeAuthorizer implements Authorizer {
  readonly asked: { user: UserInfo; access: Access }[] = [];
  constructor(private readonly allowed: ReadonlySet<string>) {}
  async authorize(user: UserInfo, access: Access): Promise<Verdict> {
    this.asked.push({ user, access });
    const ok = this.allowed.has(`${user.username}/${access.namespace}/${access.resource}`);
    return { allowed: ok, reason: ok ? "" : "no RBAC rule allows it" };
  }
}

/** A bound, planned TokenThroughput scaler with one role, as the controller leaves it. */
export function plannedScaler(opts: {
  namespace: string;
  name: string;
  role?: string;
  constrained?: number;
  raw?: number;
  current?: number;
  prompt?: string;
  generation?: string;
  conditions?: { type: string; status: string; reason: string }[];
  suspend?: boolean;
  decidedAt?: string;
}): unknown {
  const role = opts.role ?? "server";
  const at = opts.decidedAt ?? "2026-11-30T08:00:05Z";
  return {
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeploymentScaler",
    metadata: { name: opts.name, namespace: opts.namespace, uid: `uid-${opts.name}`, generation: 1 },
    spec: {
      targetRef: { name: "chat" },
      mode: "Active",
      ...(opts.suspend === undefined ? {} : { suspend: opts.suspend }),
      roles: [{ name: role, minReplicas: 1, maxReplicas: 8 }],
      algorithm: {
        type: "TokenThroughput",
        tokenThroughput: {
          serverTargetTokensPerSecond: "1000",
          ttftTargetMilliseconds: "5000",
          itlTargetMilliseconds: "1000",
        },
      },
    },
    status: {
      observedGeneration: 1,
      binding: { targetUID: "t-uid", targetName: "chat", term: 1 },
      roles: [
        {
          name: role,
          currentReplicas: opts.current ?? 2,
          readyReplicas: opts.current ?? 2,
          signalState: "Fresh",
          ...(opts.prompt === undefined ? {} : { promptTokensPerSecond: opts.prompt }),
          ...(opts.generation === undefined ? {} : { generationTokensPerSecond: opts.generation }),
          ...(opts.raw === undefined ? {} : { rawRecommendedReplicas: opts.raw }),
          ...(opts.constrained === undefined ? {} : { constrainedReplicas: opts.constrained }),
          stabilizationHistory: [
            { timestamp: "2026-11-30T08:00:00Z", replicas: 2 },
            { timestamp: at, replicas: opts.constrained ?? 2 },
          ],
        },
      ],
      conditions: (
        opts.conditions ?? [
          { type: "Bound", status: "True", reason: "Bound" },
          { type: "Blocked", status: "False", reason: "Ready" },
        ]
      ).map((c) => ({ ...c, message: "", lastTransitionTime: "2026-11-30T07:59:00Z" })),
    },
  };
}
