/**
 * Starts the controller as a list of named builders, in order: leadership, store, signals, TLS,
 * servers, loop. Each registers its stop with one lifecycle the moment it starts; a failure in any of
 * them unwinds what started, in reverse, before the error reaches the caller, and `stop()` drains
 * the same way.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { createLogger, type Logger } from "../../adapters/telemetry/logger.js";
import { ScalerMetrics } from "../../adapters/telemetry/metrics.js";
import type { Config } from "../config.js";
import type { Controller, SignalSource } from "../controller.js";
import { Lifecycle, type StopReport } from "../lifecycle.js";
import type { StartContext } from "./context.js";
import { buildLeadership } from "./leadership.js";
import { buildLoop } from "./loop.js";
import { buildServers } from "./servers.js";
import { buildSignals } from "./signals.js";
import { buildStore } from "./store.js";
import { buildTls } from "./tls.js";

/** The builders in start order; the names the start-up log and the lifecycle tests use. */
export const builderNames = ["leadership", "store", "signals", "tls", "servers", "loop"] as const;
export type BuilderName = (typeof builderNames)[number];

export interface RunningController {
  /** The controller of the current leadership (a new one each time this replica becomes leader). */
  readonly controller: Controller;
  readonly metrics: ScalerMetrics;
  readonly metricsPort: number;
  /** The HTTPS admission server's port, when webhooks are enabled. */
  readonly webhookPort: number | undefined;
  /** The HTTPS external metrics API's port, when it is enabled. */
  readonly externalMetricsPort: number | undefined;
  /** True while this replica may plan and write. */
  isLeader(): boolean;
  /** Stops everything, last started first; `releaseLease: false` leaves the Lease to expire, as a crash would. */
  stop(opts?: { releaseLease?: boolean }): Promise<readonly StopReport[]>;
}

export interface StartOptions {
  readonly config: Config;
  readonly kubeConfig: KubeConfig;
  readonly logger?: Logger;
  readonly nowMs?: () => number;
  /** Sent with every PromQL query; none when absent. */
  readonly prometheusHeaders?: Readonly<Record<string, string>>;
  /** Replaces the Prometheus signals (tests). */
  readonly source?: SignalSource;
  /** Called after each builder has started its part (the lifecycle tests inject failures here). */
  readonly afterBuilder?: (name: BuilderName) => void | Promise<void>;
}

export async function startController(opts: StartOptions): Promise<RunningController> {
  const lifecycle = new Lifecycle();
  const ctx: StartContext = {
    config: opts.config,
    kubeConfig: opts.kubeConfig,
    logger: opts.logger ?? createLogger({ level: opts.config.logLevel }),
    metrics: new ScalerMetrics(),
    nowMs: opts.nowMs ?? (() => Date.now()),
    lifecycle,
    prometheusHeaders: opts.prometheusHeaders ?? {},
  };
  const built = async <T>(name: BuilderName, part: T | Promise<T>): Promise<T> => {
    const value = await part;
    ctx.logger.debug("started", { builder: name, running: lifecycle.running() });
    await opts.afterBuilder?.(name);
    return value;
  };
  try {
    const leadership = await built("leadership", buildLeadership(ctx));
    const store = await built("store", buildStore(ctx, leadership));
    const signals = await built("signals", opts.source ?? buildSignals(ctx));
    const certificate = await built("tls", buildTls(ctx));
    const servers = await built("servers", buildServers(ctx, leadership, store, certificate));
    const loop = await built("loop", buildLoop(ctx, { leadership, store, signals, servers }));
    return {
      get controller() {
        return loop.controller();
      },
      metrics: ctx.metrics,
      metricsPort: servers.metricsPort,
      webhookPort: servers.webhookPort,
      externalMetricsPort: servers.externalMetricsPort,
      isLeader: leadership.leading,
      stop: (stopOpts = {}) => {
        loop.releaseLeaseOnStop = stopOpts.releaseLease !== false;
        return lifecycle.unwind();
      },
    };
  } catch (error) {
    const reports = await lifecycle.unwind();
    ctx.logger.info("start failed: stopped what had started", { stopped: describeReports(reports) });
    throw error;
  }
}

/** "control loop stopped in 3 ms, metrics server timed out after 10000 ms": for the log lines of an unwind. */
export function describeReports(reports: readonly StopReport[]): string {
  return reports
    .map((r) => `${r.name} ${r.outcome}${r.outcome === "stopped" ? " in" : " after"} ${Math.round(r.elapsedMs)} ms`)
    .join(", ");
}
