/**
 * The loop builder, last: starts the Lease elector and the tick loop. A fresh controller per
 * leadership, so its memory starts from the objects' status. Stopping ends the loop first (a pass in
 * flight finishes or is cut short), then steps down, releasing the Lease unless told not to.
 */
import type { WatchedResources } from "../../adapters/kubernetes/watch.js";
import { Controller, type SignalSource } from "../controller.js";
import { engineScrapeIntervalSeconds } from "../settings.js";
import { TickLoop } from "../tick-loop.js";
import type { StartContext } from "./context.js";
import type { Leadership } from "./leadership.js";
import type { Servers } from "./servers.js";

export interface Loop {
  /** The controller of the current leadership. */
  readonly controller: () => Controller;
  /** Whether stopping releases the Lease (true) or leaves it to expire, as a crash would. */
  releaseLeaseOnStop: boolean;
}

export function buildLoop(
  ctx: StartContext,
  parts: { leadership: Leadership; store: WatchedResources; signals: SignalSource; servers: Servers },
): Loop {
  const { config, logger, metrics } = ctx;
  const { elector, leading } = parts.leadership;
  const makeController = (): Controller =>
    new Controller({
      store: parts.store,
      source: parts.signals,
      metrics,
      logger,
      nowMs: ctx.nowMs,
      namespace: config.watchNamespace,
      latencyGuardReading: config.latencyGuardReading,
      engineScrapeIntervalSeconds: engineScrapeIntervalSeconds(config.engineScrapeInterval),
      ...(elector === undefined ? {} : { leaderToken: () => elector.leaderToken() }),
    });
  let controller = makeController();
  const loop: Loop = { controller: () => controller, releaseLeaseOnStop: true };
  if (elector !== undefined) {
    ctx.lifecycle.onStop("leader election", () => elector.stop({ release: loop.releaseLeaseOnStop }));
    elector.start();
  }
  let leadership = elector?.leadershipsWon ?? 0;
  const ticks = new TickLoop({
    periodMs: config.tickMs,
    logger,
    step: async () => {
      if (!leading()) return;
      const won = elector?.leadershipsWon ?? 0;
      if (won !== leadership) {
        leadership = won;
        controller = makeController();
      }
      await controller.tick();
      parts.servers.passed();
      // Leadership lost during the pass: drop what the pass reported after the loss.
      if (!leading()) metrics.setLeading(false);
    },
  });
  ctx.lifecycle.onStop("control loop", () => ticks.stop());
  ticks.start();
  return loop;
}
