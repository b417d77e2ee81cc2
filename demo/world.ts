/**
 * Everything the demo runs, on loopback: a real kube-apiserver and etcd, both
 * CRDs, the chart's admission webhooks served by the controller (Active mode,
 * as its service account), simulated vLLM engines served over HTTP, a real
 * Prometheus scraping them and the controller, and the simulated
 * ModelDeployment reconciler starting and retiring engine pods. `stop()`
 * stops every process and removes every temporary directory.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, loadYaml, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { startController, type RunningController } from "../src/app/start/controller.js";
import { createLogger } from "../src/adapters/telemetry/logger.js";
import { startControlPlane, type ControlPlane } from "../harness/kube/index.js";
import { freeLoopbackPort } from "../harness/kube/net.js";
import { PrometheusHarness } from "../harness/prometheus.js";
import {
  controllerKubeConfig,
  installWebhookConfigurations,
  productConfig,
  releaseNamespace,
  waitForProductWebhooks,
} from "../harness/product-webhooks.js";
import { EngineFleet } from "../src/sim/engines/engine-fleet.js";
import type { EngineCapacity } from "../src/sim/engines/model.js";
import { FleetServer, type FileSdGroup } from "../src/sim/engines/server.js";
import type { ArrivingRequest, Workload } from "../src/sim/engines/workload.js";
import {
  defaultFleetDeployment,
  EngineFleetPort,
  SimulatedReconciler,
  type ReconcilerTimings,
} from "../src/sim/reconciler/index.js";
import { repoRoot } from "./options.js";

export const group = "worker.gpustack.ai";
export const version = "v1";

/** What the demo's simulated world looks like; every value here is printed at start with its reason. */
export interface WorldSettings {
  readonly timings: Partial<ReconcilerTimings>;
  /** Capacity overrides per serving kind of the simulated engines. */
  readonly prefillCapacity: Partial<EngineCapacity>;
  readonly scrapeIntervalSeconds: number;
  readonly controllerTickMs: number;
}

/** A workload that yields nothing until `begin` says when the replay starts. */
export class DeferredWorkload implements Workload {
  private inner: Workload | undefined;
  begin(workload: Workload): void {
    this.inner = workload;
  }
  take(untilSeconds: number): ArrivingRequest[] {
    return this.inner?.take(untilSeconds) ?? [];
  }
}

/** The controller's warnings and errors, kept in memory so they do not break the table; the summary reports them. */
export class LogTail {
  count = 0;
  readonly lines: string[] = [];
  write(line: string): void {
    this.count += 1;
    this.lines.push(line);
    if (this.lines.length > 20) this.lines.shift();
  }
}

export class DemoWorld {
  readonly custom: CustomObjectsApi;
  private syncTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly controlPlane: ControlPlane,
    readonly fleet: EngineFleet,
    readonly fleetServer: FleetServer,
    readonly prometheus: PrometheusHarness,
    readonly reconciler: SimulatedReconciler,
    readonly controller: RunningController,
    readonly workload: DeferredWorkload,
    readonly controllerLog: LogTail,
  ) {
    this.custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /** Starts every piece in dependency order; on failure stops what already runs. */
  static async start(settings: WorldSettings, namespace: string, progress: (step: string) => void): Promise<DemoWorld> {
    const stops: (() => Promise<void>)[] = [];
    const unwind = async (): Promise<void> => {
      for (const stop of stops.reverse()) await stop().catch(() => undefined);
    };
    try {
      progress("kube-apiserver and etcd");
      const controlPlane = await startControlPlane();
      stops.push(() => controlPlane.stop());
      const scalerCrd = readFileSync(
        join(repoRoot, "charts", "mds-scaler", "crds", "modeldeploymentscalers.worker.gpustack.ai.yaml"),
        "utf8",
      );
      await controlPlane.applyCrd(loadYaml<V1CustomResourceDefinition>(scalerCrd));
      const targetCrd = readFileSync(
        join(repoRoot, "test", "fixtures", "crds", "modeldeployments.worker.gpustack.ai.yaml"),
        "utf8",
      );
      await controlPlane.applyCrd(loadYaml<V1CustomResourceDefinition>(targetCrd));
      const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
      for (const name of [releaseNamespace, namespace]) await core.createNamespace({ body: { metadata: { name } } });

      progress("simulated vLLM engines and Prometheus");
      const fleet = new EngineFleet({ startSeconds: Date.now() / 1000, stepSeconds: 0.05 });
      const fleetServer = new FleetServer({ fleet, tickMs: 100, servedHistory: 0 });
      await fleetServer.start();
      stops.push(() => fleetServer.stop());
      // Scraped labels win on a clash, as the chart's ServiceMonitor has it: the controller's per-scaler
      // series keep the scaler's namespace, its own series take the pod's.
      const prometheus = await PrometheusHarness.start({
        scrapeIntervalSeconds: settings.scrapeIntervalSeconds,
        honorLabels: true,
      });
      stops.push(() => prometheus.stop());

      progress("the ModelDeployment reconciler");
      const workload = new DeferredWorkload();
      const reconciler = new SimulatedReconciler({
        kubeConfig: controlPlane.kubeConfig,
        namespace,
        fleet: new EngineFleetPort(fleet, {
          describe: (ns, deployment, context) => {
            const base = defaultFleetDeployment(ns, deployment, context);
            return {
              ...base,
              roles: base.roles.map((r) =>
                r.serving === "prefill" ? { ...r, capacity: { ...r.capacity, ...settings.prefillCapacity } } : r,
              ),
              workload,
            };
          },
        }),
        timings: settings.timings,
      });
      await waitFor("the reconciler to start", 30_000, async () => (await reconciler.start(), true));
      stops.push(() => reconciler.stop());

      progress("the controller and its admission webhooks");
      const controllerLog = new LogTail();
      const webhookPort = await freeLoopbackPort();
      await installWebhookConfigurations(controlPlane.kubeConfig, webhookPort);
      const controller = await startController({
        config: productConfig({
          webhookPort,
          podName: "mds-scaler-demo",
          prometheusUrl: prometheus.url,
          extra: [
            `--tick-ms=${settings.controllerTickMs}`,
            "--log-level=warn",
            // Admission warns about windows shorter than two scrapes of the demo's own Prometheus.
            `--engine-scrape-interval=${settings.scrapeIntervalSeconds}s`,
          ],
        }),
        logger: createLogger({ level: "warn", write: (line) => controllerLog.write(line) }),
        kubeConfig: await controllerKubeConfig(controlPlane),
      });
      stops.push(async () => void (await controller.stop()));
      await waitForProductWebhooks(controlPlane.kubeConfig, namespace, 60_000);

      const world = new DemoWorld(
        controlPlane,
        fleet,
        fleetServer,
        prometheus,
        reconciler,
        controller,
        workload,
        controllerLog,
      );
      world.syncTimer = setInterval(() => {
        // Discovery as a PodMonitor and a ServiceMonitor would do it: engine pods as they come and go, and the controller.
        if (prometheus.running) void prometheus.setTargets(world.scrapeTargets()).catch(() => undefined);
      }, 500);
      await prometheus.setTargets(world.scrapeTargets());
      return world;
    } catch (error) {
      await unwind();
      throw error;
    }
  }

  private scrapeTargets(): FileSdGroup[] {
    return [
      ...this.fleetServer.fileSdGroups(),
      {
        targets: [`127.0.0.1:${this.controller.metricsPort}`],
        labels: { job: "mds-scaler", namespace: releaseNamespace, pod: "mds-scaler-demo" },
      },
    ];
  }

  async applyTarget(object: Record<string, unknown>, namespace: string): Promise<void> {
    await this.custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeployments",
      body: withNamespace(object, namespace),
    });
  }

  async applyScaler(object: Record<string, unknown>, namespace: string): Promise<void> {
    await this.custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeploymentscalers",
      body: withNamespace(object, namespace),
    });
  }

  async get(namespace: string, plural: string, name: string): Promise<Record<string, unknown>> {
    return (await this.custom.getNamespacedCustomObject({ group, version, namespace, plural, name })) as Record<
      string,
      unknown
    >;
  }

  /** Stops in reverse order of start; each stop is awaited so no process outlives the demo. */
  async stop(): Promise<void> {
    if (this.syncTimer !== undefined) clearInterval(this.syncTimer);
    await this.controller.stop().catch(() => undefined);
    await this.reconciler.stop().catch(() => undefined);
    await this.prometheus.stop().catch(() => undefined);
    await this.fleetServer.stop().catch(() => undefined);
    await this.controlPlane.stop();
  }
}

function withNamespace(object: Record<string, unknown>, namespace: string): Record<string, unknown> {
  const metadata = (object["metadata"] ?? {}) as Record<string, unknown>;
  return { ...object, metadata: { ...metadata, namespace } };
}

/** Polls `check` until it returns true or the deadline passes; the error names what was awaited. */
export async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: last });
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}
