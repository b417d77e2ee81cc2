/**
 * The PromQL source as the controller's `SignalSource` port: a failed or partial
 * query is logged with what it cost, once when families turn unknown and once
 * when they are known again; what else a pass notes (`PassNotes`), once per
 * change. The controller alone decides which scalers are due: the port samples
 * every one it is asked for, so a scaler the controller plans is never left
 * without samples by a second, later clock read.
 */
import type { RoleSamples } from "../../core/signals/types.js";
import type { SampleRequest, SignalSource } from "../../app/ports.js";
import { FailureLog } from "../retry/failure-log.js";
import type { Logger } from "../telemetry/logger.js";
import { PassNotes } from "./pass-notes.js";
import type { PrometheusSignalSource } from "./source.js";

export class PromqlSignals implements SignalSource {
  private readonly health: FailureLog | undefined;
  private readonly notes: PassNotes | undefined;

  constructor(
    private readonly source: PrometheusSignalSource,
    private readonly nowMs: () => number,
    logger?: Logger,
  ) {
    this.health = logger === undefined ? undefined : new FailureLog("PromQL signal families", logger);
    this.notes = logger === undefined ? undefined : new PassNotes(logger);
  }

  async sample(requests: readonly SampleRequest[]): Promise<ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>> {
    const pass = await this.source.sample(requests, this.nowMs());
    if (Object.keys(pass.unknownFamilies).length > 0) {
      this.health?.failed({ unknownFamilies: pass.unknownFamilies }, this.nowMs());
    } else if (requests.length > 0) {
      this.health?.succeeded(this.nowMs());
    }
    this.notes?.read(pass);
    return pass.scalers;
  }
}
