/**
 * A small world for admission and failover tests, where what matters is the
 * writes and not the signal path: a `SignalSource` that reports engine pods
 * whose queues a test dials, and a status mirror standing in for the
 * ModelDeployment reconciler (every role's replicas are at once desired,
 * ready and admitted). Both read and write through a real API server.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from "@kubernetes/client-node";
import type { SampleRequest, SignalSource } from "../../src/app/controller.js";
import type { PodSample, RoleSamples } from "../../src/core/signals/types.js";

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
const group = "worker.gpustack.ai";
const version = "v1";

interface TargetShape {
  spec?: { roles?: { name: string; replicas: number }[] };
  status?: { roles?: { name: string; ready?: number }[] };
}

/** Total queue depth of a role as a function of its ready replicas. */
export type QueueDial = (readyReplicas: number) => number;

export class QueueWorld {
  private readonly custom: CustomObjectsApi;
  private dial: QueueDial = () => 0;
  /** Whether pods report settled token-rate windows (zero rates): without them signals stay `Missing`, which holds scale-down. */
  private settled = false;
  private mirrorTimer: NodeJS.Timeout | undefined;

  constructor(kubeConfig: KubeConfig) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /**
   * A one-role Server ModelDeployment mirrored by this world, and an Active Proportional scaler on its
   * queue depth (8 per replica, 1 to 16 replicas, sampled every 5 s): the pair the failover tests scale.
   */
  async createPair(namespace: string, name: string): Promise<void> {
    await this.custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeployments",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeployment",
        metadata: { name },
        spec: { roles: [{ name: "server", kind: "Server", instanceType: "h100", replicas: 1 }] },
      },
    });
    this.startStatusMirror(namespace, name);
    await this.custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeploymentscalers",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeploymentScaler",
        metadata: { name },
        spec: {
          targetRef: { name },
          mode: "Active",
          sampling: { intervalSeconds: 5 },
          roles: [{ name: "server", minReplicas: 1, maxReplicas: 16 }],
          algorithm: {
            type: "Proportional",
            proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: "8" }] },
          },
        },
      },
    });
  }

  setQueue(dial: QueueDial): void {
    this.dial = dial;
  }

  /** Pods report established, zero token-rate windows, so an idle role may shrink. */
  settleWindows(): void {
    this.settled = true;
  }

  private async target(namespace: string, name: string): Promise<TargetShape | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({
        group,
        version,
        namespace,
        plural: "modeldeployments",
        name,
      })) as TargetShape;
    } catch {
      return undefined;
    }
  }

  readonly source: SignalSource = {
    sample: async (requests: readonly SampleRequest[]) => {
      const nowSeconds = Date.now() / 1000;
      const out = new Map<string, Map<string, RoleSamples>>();
      for (const request of requests) {
        const target = await this.target(request.namespace, request.deployment);
        const roles = new Map<string, RoleSamples>();
        for (const role of request.roles) {
          const ready = target?.status?.roles?.find((r) => r.name === role)?.ready ?? 0;
          const total = this.dial(ready);
          const pods: PodSample[] = Array.from({ length: ready }, (_, i) => ({
            pod: `${request.deployment}-${role}-${i}-0`,
            engine: "vllm",
            lastSampleUnixSeconds: nowSeconds,
            runningRequests: total / ready,
            waitingRequests: 0,
            windows: this.settled
              ? {
                  stable: { established: true, promptTokensPerSecond: 0, generationTokensPerSecond: 0 },
                  panic: { established: true, promptTokensPerSecond: 0, generationTokensPerSecond: 0 },
                }
              : { stable: { established: false }, panic: { established: false } },
          }));
          roles.set(role, { pods });
        }
        out.set(request.key, roles);
      }
      return out;
    },
  };

  /** Keeps `status.roles` equal to the spec's counts, as a reconciler that admits at once would. */
  startStatusMirror(namespace: string, name: string, periodMs = 200): void {
    const mirror = async (): Promise<void> => {
      const target = await this.target(namespace, name);
      const roles = target?.spec?.roles ?? [];
      const status = roles.map((r) => ({
        name: r.name,
        desired: r.replicas,
        ready: r.replicas,
        quotaReserved: r.replicas,
      }));
      const current = JSON.stringify(target?.status?.roles ?? []);
      if (target === undefined || JSON.stringify(status) === current) return;
      await this.custom.patchNamespacedCustomObjectStatus(
        { group, version, namespace, plural: "modeldeployments", name, body: { status: { roles: status } } },
        mergePatch,
      );
    };
    const tick = (): void => {
      mirror()
        .catch(() => undefined)
        .finally(() => {
          if (this.mirrorTimer !== undefined) this.mirrorTimer = setTimeout(tick, periodMs);
        });
    };
    this.mirrorTimer = setTimeout(tick, 0);
  }

  stop(): void {
    clearTimeout(this.mirrorTimer);
    this.mirrorTimer = undefined;
  }
}
