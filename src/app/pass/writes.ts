/**
 * The writes one pass performs, each guarded by the version it read: the finalizer, the binding, the fenced
 * commit (read back when its answer is lost) and the status (retried with back-off while it carries a
 * commit's records). The plan decided every one of them; this file only sends them and reads the answers.
 */
import { ModelDeploymentSchema, type LeaderToken, type ModelDeployment } from "../../core/api/model-deployment.js";
import type { Scaler, ScalerStatus } from "../../core/api/scaler.js";
import { parseDecisionAnnotation, type BindingWrite } from "../../core/binding/binding.js";
import {
  acquirePatch,
  commitPatch,
  releasePatch,
  type JsonPatchOp,
  type PatchTarget,
} from "../../core/binding/patch.js";
import { withLeaderToken } from "../../core/planner/decision-id.js";
import type { Commit } from "../../core/planner/types.js";
import { NotLeaderError } from "../../adapters/kubernetes/not-leader.js";
import { backoffDelayMs, type BackoffPolicy } from "../../adapters/retry/backoff.js";
import type { Logger } from "../../adapters/telemetry/logger.js";
import type { Clock, GuardedWrite, ScalerStore } from "../ports.js";
import { namespaceOf } from "./identity.js";
import type { ScalerMemory } from "./memory.js";

export const finalizer = "worker.gpustack.ai/mds-scaler";

/** Attempts of a status write that carries a commit record, within one pass. */
const recordWriteAttempts = 4;
const recordWriteBackoff: BackoffPolicy = { initialMs: 250, maxMs: 2_000 };

/** The scaler changed between the list and the status write: the next pass writes the status. */
export class StatusRaced extends Error {
  override readonly name = "StatusRaced";
}

export interface WriteDeps {
  readonly store: ScalerStore;
  readonly logger: Logger;
  readonly sleep: Clock["sleep"];
  /** Uniform in [0, 1): the jitter of the retry back-off. */
  readonly random: () => number;
  /** The current leadership's token, stamped on every decision (absent without leader election). */
  readonly leaderToken?: (() => LeaderToken | undefined) | undefined;
}

export class PassWrites {
  constructor(private readonly deps: WriteDeps) {}

  /** The target as a ModelDeployment; `fresh` reads the API server rather than the watch cache. */
  async readTarget(namespace: string, name: string, fresh: boolean): Promise<ModelDeployment | undefined> {
    const raw = await this.deps.store.getTarget(namespace, name, { fresh });
    if (raw === undefined) return undefined;
    const parsed = ModelDeploymentSchema.safeParse(raw);
    if (!parsed.success) {
      throw new Error(
        `target ${namespace}/${name} does not have the ModelDeployment shape: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
      );
    }
    return parsed.data;
  }

  /** Adds the finalizer to a scaler that lacks it; the patch's resourceVersion guards the status write after it. */
  async addFinalizer(scaler: Scaler, memory: ScalerMemory): Promise<void> {
    if (scaler.metadata.deletionTimestamp !== undefined || (scaler.metadata.finalizers ?? []).includes(finalizer))
      return;
    const ops: JsonPatchOp[] =
      scaler.metadata.finalizers === undefined
        ? [{ op: "add", path: "/metadata/finalizers", value: [finalizer] }]
        : [{ op: "add", path: "/metadata/finalizers/-", value: finalizer }];
    const patched = (await this.deps.store.patchScaler(namespaceOf(scaler), scaler.metadata.name, ops)) as {
      metadata?: { resourceVersion?: string };
    };
    memory.scalerVersion = patched?.metadata?.resourceVersion ?? memory.scalerVersion;
  }

  async removeFinalizer(scaler: Scaler): Promise<void> {
    const finalizers = scaler.metadata.finalizers ?? [];
    const index = finalizers.indexOf(finalizer);
    if (index < 0) return;
    await this.deps.store.patchScaler(namespaceOf(scaler), scaler.metadata.name, [
      { op: "test", path: `/metadata/finalizers/${index}`, value: finalizer },
      { op: "remove", path: `/metadata/finalizers/${index}` },
    ]);
  }

  /** Acquires or releases the binding; later writes of the pass are guarded by the version it produced. */
  async applyBinding(
    write: BindingWrite,
    target: ModelDeployment | undefined,
    namespace: string,
  ): Promise<GuardedWrite> {
    const nothing: GuardedWrite = { kind: "Written", object: undefined };
    if (target === undefined || write.kind === "none") return nothing;
    const patch =
      write.kind === "acquire"
        ? acquirePatch(patchTargetOf(target), write.binding)
        : releasePatch(patchTargetOf(target));
    if (patch.length === 0) return nothing;
    const written = await this.deps.store.patchTarget(namespace, target.metadata.name, patch);
    if (written.kind === "Conflict") return written;
    const updated = ModelDeploymentSchema.safeParse(written.object);
    if (updated.success) {
      Object.assign(target.metadata, {
        resourceVersion: updated.data.metadata.resourceVersion,
        annotations: updated.data.metadata.annotations,
        labels: updated.data.metadata.labels,
      });
    }
    return written;
  }

  /**
   * Writes the vector and its decision. An answer that never came (a timeout,
   * a dropped connection) is ambiguous: the server may have applied the write.
   * The target is read back, and a decision that landed counts as committed.
   * One that lands later still is rebuilt by the next pass's plan.
   */
  async commit(namespace: string, target: ModelDeployment, commit: Commit): Promise<GuardedWrite> {
    const name = target.metadata.name;
    try {
      const decision = withLeaderToken(commit.decision, this.deps.leaderToken?.());
      return await this.deps.store.patchTarget(namespace, name, commitPatch(patchTargetOf(target), decision));
    } catch (error) {
      // A write refused for lost leadership was never sent: nothing to read back.
      if (error instanceof NotLeaderError) throw error;
      const landed = await this.decisionOnTarget(namespace, name).catch(() => undefined);
      if (landed !== commit.decision.decisionID) throw error;
      this.deps.logger.warn("the commit's answer was lost; the target carries its decision", {
        target: `${namespace}/${name}`,
        decisionID: landed,
        error,
      });
      return { kind: "Written", object: undefined };
    }
  }

  private async decisionOnTarget(namespace: string, name: string): Promise<string | undefined> {
    const target = await this.readTarget(namespace, name, true);
    const decision = parseDecisionAnnotation(target?.metadata.annotations ?? {});
    return decision.state === "valid" ? decision.value.decisionID : undefined;
  }

  /**
   * Writes status; one carrying a commit's records is retried with back-off. The memory says whether it
   * landed.
   */
  async writeStatus(
    memory: ScalerMemory,
    namespace: string,
    name: string,
    status: ScalerStatus,
    carries: "Status" | "Record",
  ): Promise<void> {
    const attempts = carries === "Record" ? recordWriteAttempts : 1;
    for (let attempt = 1; ; attempt++) {
      let written: GuardedWrite;
      try {
        written = await this.deps.store.writeScalerStatus(namespace, name, status, {
          resourceVersion: memory.scalerVersion,
        });
      } catch (error) {
        memory.unwritten = carries;
        if (attempt >= attempts || error instanceof NotLeaderError) throw error;
        this.deps.logger.warn("status write failed; retrying", { scaler: `${namespace}/${name}`, attempt, error });
        await this.deps.sleep(backoffDelayMs(attempt, this.deps.random(), recordWriteBackoff));
        continue;
      }
      if (written.kind === "Written") {
        memory.unwritten = "Nothing";
        // A second status write in this pass (the records first, then the new status) is guarded by this one's version.
        const version = (written.object as { metadata?: { resourceVersion?: string } } | undefined)?.metadata
          ?.resourceVersion;
        if (version !== undefined) memory.scalerVersion = version;
        return;
      }
      // The scaler moved since it was listed: retrying with the same version cannot land. The next pass
      // re-plans from a fresh list and writes then, even if nothing else moved.
      memory.unwritten = carries;
      throw new StatusRaced(`write status of ${namespace}/${name}: ${written.message}`);
    }
  }
}

function patchTargetOf(target: ModelDeployment): PatchTarget {
  return {
    resourceVersion: target.metadata.resourceVersion ?? "",
    annotations: target.metadata.annotations,
    labels: target.metadata.labels,
    roleNames: target.spec.roles.map((r) => r.name),
    replicas: Object.fromEntries(target.spec.roles.map((r) => [r.name, r.replicas])),
  };
}
