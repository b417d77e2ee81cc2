/**
 * The whole world a controller needs, for end-to-end tests and benchmarks: a
 * real kube-apiserver and etcd, both CRDs, the engine fleet simulator served
 * over HTTP, a real Prometheus scraping it, and the simulated ModelDeployment
 * reconciler starting and retiring engine pods. Everything runs on loopback
 * and stops with `stop()`.
 */
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { ScalerMetrics } from "../../src/adapters/telemetry/metrics.js";
import { createLogger, type Logger } from "../../src/adapters/telemetry/logger.js";
import { allNamespaces, KubeResources } from "../../src/adapters/kubernetes/resources.js";
import { WatchedResources } from "../../src/adapters/kubernetes/watch.js";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import { Controller, type ScalerStore } from "../../src/app/controller.js";
import { PromqlSignals } from "../../src/adapters/prometheus/signal-port.js";
import { EngineFleet } from "../../src/sim/engines/engine-fleet.js";
import { FleetServer } from "../../src/sim/engines/server.js";
import { SyntheticWorkload } from "../../src/sim/engines/workload.js";
import {
  EngineFleetPort,
  defaultFleetDeployment,
  SimulatedReconciler,
  type ReconcilerTimings,
} from "../../src/sim/reconciler/index.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { loadModelDeploymentCrd, loadScalerCrd } from "./crds.js";
import { eventually } from "./eventually.js";

export { eventually };

export const group = "worker.gpustack.ai";
export const version = "v1";

export interface TestbedOptions {
  readonly timings?: Partial<ReconcilerTimings>;
  readonly scrapeIntervalSeconds?: number;
}

/** Offered load per deployment, changed by tests while the fleet runs. */
export class LoadDial {
  private readonly rates = new Map<string, number>();
  set(namespace: string, deployment: string, requestsPerSecond: number): void {
    this.rates.set(`${namespace}/${deployment}`, requestsPerSecond);
  }
  get(namespace: string, deployment: string): number {
    return this.rates.get(`${namespace}/${deployment}`) ?? 0;
  }
}

export class Testbed {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  private syncTimer: NodeJS.Timeout | undefined;
  private readonly loops: (() => Promise<void>)[] = [];

  private constructor(
    readonly controlPlane: ControlPlane,
    readonly fleet: EngineFleet,
    readonly fleetServer: FleetServer,
    readonly prometheus: PrometheusHarness,
    readonly reconciler: SimulatedReconciler,
    readonly load: LoadDial,
  ) {
    this.custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  }

  static async start(options: TestbedOptions = {}): Promise<Testbed> {
    const controlPlane = await startControlPlane();
    try {
      await controlPlane.applyCrd(await loadScalerCrd());
      await controlPlane.applyCrd(await loadModelDeploymentCrd());
      const fleet = new EngineFleet({ startSeconds: Date.now() / 1000, stepSeconds: 0.05 });
      const fleetServer = new FleetServer({ fleet, tickMs: 100 });
      await fleetServer.start();
      const prometheus = await PrometheusHarness.start({ scrapeIntervalSeconds: options.scrapeIntervalSeconds ?? 1 });
      const load = new LoadDial();
      const reconciler = new SimulatedReconciler({
        kubeConfig: controlPlane.kubeConfig,
        fleet: new EngineFleetPort(fleet, {
          describe: (namespace, deployment, context) => ({
            ...defaultFleetDeployment(namespace, deployment, context),
            workload: new SyntheticWorkload({
              seed: 7,
              startSeconds: Date.now() / 1000,
              requestsPerSecond: () => load.get(namespace, deployment),
              arrivals: "uniform",
              promptTokens: { kind: "fixed", tokens: 400 },
              outputTokens: { kind: "fixed", tokens: 100 },
            }),
          }),
        }),
        timings: {
          coldStartMs: 1_000,
          admitMs: 0,
          withdrawMs: 200,
          drainMs: 500,
          deleteMs: 200,
          settleMs: 200,
          ...options.timings,
        },
      });
      // Right after a CRD is created the API server may answer 429 while its storage initialises.
      await eventually("the reconciler to start", async () => (await reconciler.start(), true), 30_000, 500);
      const bed = new Testbed(controlPlane, fleet, fleetServer, prometheus, reconciler, load);
      bed.syncTimer = setInterval(() => {
        // Prometheus discovers pods the way a PodMonitor would: as they come and go.
        if (bed.prometheus.running)
          void bed.prometheus.setTargets(bed.fleetServer.fileSdGroups()).catch(() => undefined);
      }, 500);
      return bed;
    } catch (error) {
      await controlPlane.stop();
      throw error;
    }
  }

  async namespace(name: string): Promise<string> {
    await this.core.createNamespace({ body: { metadata: { name } } });
    return name;
  }

  async createDeployment(
    namespace: string,
    name: string,
    roles: readonly { name: string; kind: string; replicas: number; instanceType?: string }[],
  ): Promise<void> {
    await this.custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeployments",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeployment",
        metadata: { name, namespace },
        spec: { roles: roles.map((r) => ({ instanceType: "h100", ...r })) },
      },
    });
  }

  async createScaler(namespace: string, name: string, spec: Record<string, unknown>): Promise<void> {
    await this.custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeploymentscalers",
      body: { apiVersion: `${group}/${version}`, kind: "ModelDeploymentScaler", metadata: { name, namespace }, spec },
    });
  }

  async getScaler(namespace: string, name: string): Promise<ScalerObject> {
    return (await this.custom.getNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeploymentscalers",
      name,
    })) as ScalerObject;
  }

  async getTarget(namespace: string, name: string): Promise<TargetObject> {
    return (await this.custom.getNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeployments",
      name,
    })) as TargetObject;
  }

  /**
   * A controller wired to this testbed, ticking every `tickMs` until the bed
   * stops. `wrapStore` lets a test interpose on Kubernetes writes.
   */
  async startController(opts: ControllerOptions & { tickMs?: number } = {}): Promise<RunningTestController> {
    const { controller, metrics, stop: stopWatch } = await this.controller(opts);
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        await controller.tick();
        await new Promise((resolve) => setTimeout(resolve, opts.tickMs ?? 250));
      }
    })();
    const stop = async (): Promise<void> => {
      stopped = true;
      await loop;
      await stopWatch();
    };
    this.loops.push(stop);
    return { controller, metrics, stop };
  }

  /** A controller wired to this testbed that ticks only when the caller says so. */
  async controller(
    opts: ControllerOptions = {},
  ): Promise<{ controller: Controller; metrics: ScalerMetrics; stop: () => Promise<void> }> {
    const metrics = new ScalerMetrics({ defaultMetrics: false });
    const logger = opts.logger ?? createLogger({ level: "warn" });
    const resources = new KubeResources(this.controlPlane.kubeConfig, { timeoutMs: 10_000 });
    const watched = new WatchedResources({
      resources,
      namespace: opts.namespace ?? allNamespaces,
      logger,
    });
    await watched.start();
    const store = opts.wrapStore?.(watched) ?? watched;
    const source = new PrometheusSignalSource(
      new PrometheusClient({ endpoint: this.prometheus.url, timeoutMs: 3_000 }),
      {
        labels: {
          namespace: "namespace",
          pod: "pod",
          deployment: "app_kubernetes_io_instance",
          role: "app_kubernetes_io_component",
        },
        metricNameSeparator: ":",
        queryTimeoutMs: 3_000,
      },
    );
    const controller = new Controller({
      store,
      source: new PromqlSignals(source, () => Date.now()),
      metrics,
      logger,
      nowMs: () => Date.now(),
      namespace: opts.namespace ?? "",
      engineScrapeIntervalSeconds: this.prometheus.scrapeIntervalSeconds,
    });
    return { controller, metrics, stop: () => watched.stop() };
  }

  async stop(): Promise<void> {
    for (const stop of this.loops) await stop();
    if (this.syncTimer !== undefined) clearInterval(this.syncTimer);
    await this.reconciler.stop();
    await this.prometheus.stop();
    await this.fleetServer.stop();
    await this.controlPlane.stop();
  }
}

export interface ControllerOptions {
  readonly namespace?: string;
  /** Lets a test interpose on Kubernetes calls. */
  readonly wrapStore?: (store: ScalerStore) => ScalerStore;
  readonly logger?: Logger;
}

export interface RunningTestController {
  readonly controller: Controller;
  readonly metrics: ScalerMetrics;
  stop(): Promise<void>;
}

export interface ScalerObject {
  metadata: { name: string; uid: string; generation: number; finalizers?: string[]; resourceVersion: string };
  spec: Record<string, unknown>;
  status?: {
    observedGeneration?: number;
    binding?: { targetUID: string; term?: number };
    conditions?: { type: string; status: string; reason: string; message: string }[];
    roles?: {
      name: string;
      currentReplicas: number;
      readyReplicas: number;
      signalState: string;
      rawRecommendedReplicas?: number;
      constrainedReplicas?: number;
      reason?: string;
      promptTokensPerSecond?: string;
      generationTokensPerSecond?: string;
    }[];
    lastCommit?: {
      decisionID: string;
      term: number;
      vector: Record<string, number>;
      baselineVector: Record<string, number>;
    };
    pendingCohort?: unknown;
    lastScaleDown?: { outcome: string; cooldownUntil?: string; role: string };
  };
}

export interface TargetObject {
  metadata: {
    name: string;
    uid: string;
    generation: number;
    resourceVersion: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec: { roles: { name: string; kind: string; replicas: number }[] };
  status?: {
    roles?: { name: string; desired?: number; ready?: number; quotaReserved?: number }[];
    retirement?: { roleName: string; replicaOrdinal: number; state: string } | null;
  };
}

export function condition(
  scaler: ScalerObject,
  type: string,
): { status: string; reason: string; message?: string } | undefined {
  return scaler.status?.conditions?.find((c) => c.type === type);
}

export function replicasOf(target: TargetObject, role: string): number | undefined {
  return target.spec.roles.find((r) => r.name === role)?.replicas;
}

/** Records a target's replica counts and the scaler's reasons while a scenario runs. */
export class Timeline {
  readonly points: {
    atSeconds: number;
    replicas: Record<string, number>;
    reasons: Record<string, string>;
    blocked: string;
  }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly startedMs = Date.now();

  constructor(
    private readonly bed: Testbed,
    private readonly namespace: string,
    private readonly name: string,
  ) {
    this.timer = setInterval(() => void this.sample().catch(() => undefined), 500);
  }

  private async sample(): Promise<void> {
    const [target, scaler] = await Promise.all([
      this.bed.getTarget(this.namespace, this.name),
      this.bed.getScaler(this.namespace, this.name),
    ]);
    const replicas = Object.fromEntries(target.spec.roles.map((r) => [r.name, r.replicas]));
    const reasons = Object.fromEntries(
      (scaler.status?.roles ?? []).map((r) => [
        r.name,
        `${r.reason ?? ""} raw=${r.rawRecommendedReplicas ?? "-"} ready=${r.readyReplicas} ${r.signalState} prompt=${r.promptTokensPerSecond ?? "-"} gen=${r.generationTokensPerSecond ?? "-"}`,
      ]),
    );
    const blocked = condition(scaler, "Blocked")?.reason ?? "";
    const last = this.points.at(-1);
    if (
      last === undefined ||
      JSON.stringify([last.replicas, last.reasons, last.blocked]) !== JSON.stringify([replicas, reasons, blocked])
    ) {
      this.points.push({ atSeconds: Math.round((Date.now() - this.startedMs) / 100) / 10, replicas, reasons, blocked });
    }
  }

  /** The distinct successive counts of one role. */
  counts(role: string): number[] {
    const out: number[] = [];
    for (const p of this.points) {
      const n = p.replicas[role];
      if (n !== undefined && out.at(-1) !== n) out.push(n);
    }
    return out;
  }

  stop(): string {
    if (this.timer !== undefined) clearInterval(this.timer);
    return this.points
      .map(
        (p) =>
          `${p.atSeconds.toFixed(1).padStart(6)} s  ${JSON.stringify(p.replicas)}  ${JSON.stringify(p.reasons)}  Blocked=${p.blocked}`,
      )
      .join("\n");
  }
}
