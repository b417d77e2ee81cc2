/**
 * Leader election on a coordination.k8s.io/v1 Lease, so that of several
 * replicas at most one plans and writes. Every `retryPeriodMs` each replica
 * reads the Lease: the holder renews it, the others take it over once it has
 * not changed for `leaseDurationSeconds` as measured on their own clock (no
 * trust in the holder's clock). Every write carries the resourceVersion it
 * read, so two replicas can never both win the same round.
 *
 * Expiry and renewal are judged on a monotonic clock (an injected port), never
 * on wall time, which NTP may step. A leader leads for `renewDeadlineMs` after
 * it sent its last successful renewal; a follower counts the lease
 * from the end of the read that showed it the record change. Since
 * renewDeadlineMs + writeTimeoutMs < leaseDurationSeconds, the leader's last
 * write has landed or failed before a follower may take over (docs/controller.md,
 * Leadership). Leadership is judged afresh at every `writePermit()`, and the
 * permit's signal aborts in-flight calls on step-down. Stopping releases the
 * Lease, so a rollout hands over at once instead of after a lease duration.
 */
import {
  ApiException,
  CoordinationV1Api,
  type KubeConfig,
  type V1Lease,
  type V1LeaseSpec,
} from "@kubernetes/client-node";
import type { LeaderToken } from "../../core/api/model-deployment.js";
import { FailureLog } from "../retry/failure-log.js";
import type { Logger } from "../telemetry/logger.js";
import { callOptions } from "./call-options.js";
import { NotLeaderError } from "./not-leader.js";

export interface LeaderElectorOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica: the pod name. */
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  /** How often to renew or try to acquire. */
  readonly retryPeriodMs: number;
  /** Upper bound of one Lease API call. */
  readonly timeoutMs: number;
  /** How long a leader keeps leading after the start of its last successful renewal; default 2/3 of the lease. */
  readonly renewDeadlineMs?: number;
  /** Upper bound of one write made under this leadership (the controller's call timeout); default `timeoutMs`. */
  readonly writeTimeoutMs?: number;
  readonly logger: Logger;
  /** Wall clock, only for the Lease's acquireTime and renewTime (read by people and other tools). */
  readonly nowMs?: () => number;
  /** Monotonic clock that judges expiry and renewal; `performance.now()` unless a test steps it. */
  readonly monotonicMs?: () => number;
  readonly onStartedLeading?: () => void;
  readonly onStoppedLeading?: () => void;
}

export interface LeaseTiming {
  readonly leaseDurationSeconds: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly writeTimeoutMs: number;
}

/**
 * What is wrong with a timing, in the option names; empty when it is safe. The
 * renew deadline must leave a write sent just before it the whole write timeout
 * to land before a follower can take over, and at least one retry must fit in it.
 */
export function leaseTimingProblems(t: LeaseTiming): string[] {
  const problems: string[] = [];
  const leaseMs = t.leaseDurationSeconds * 1000;
  if (!(t.renewDeadlineMs + t.writeTimeoutMs < leaseMs))
    problems.push(
      `renewDeadlineMs (${t.renewDeadlineMs}) + writeTimeoutMs (${t.writeTimeoutMs}) must be less than leaseDurationSeconds (${t.leaseDurationSeconds}) × 1000`,
    );
  if (!(t.retryPeriodMs < t.renewDeadlineMs))
    problems.push(`retryPeriodMs (${t.retryPeriodMs}) must be less than renewDeadlineMs (${t.renewDeadlineMs})`);
  return problems;
}

/** Lease times are MicroTime: the API server wants six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function timeOf(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value === "string") {
    const t = Date.parse(value);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

function statusCode(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly nowMs: () => number;
  private readonly monotonicMs: () => number;
  /** Lease rounds are logged when they start failing and when they work again, not every round. */
  private readonly health: FailureLog;
  readonly renewDeadlineMs: number;
  private leading = false;
  /** Monotonic time the last successful renewal was sent: leadership lasts renewDeadlineMs from here. */
  private lastRenewMs = 0;
  /** The token of the current leadership: this identity and the Lease transitions it wrote. */
  private token: LeaderToken | undefined;
  /** Aborted on step-down: every write made under this leadership carries its signal. */
  private leadership: AbortController | undefined;
  /** Steps down at the renew deadline even when no round or write looks. */
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** The Lease record last seen and when (monotonic) this replica saw it change. */
  private observed: { key: string; atMs: number; holder: string; durationMs: number } | undefined;
  /** Ends the wait between rounds early (on stop). */
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private transitions = 0;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.renewDeadlineMs = opts.renewDeadlineMs ?? Math.floor((opts.leaseDurationSeconds * 1000 * 2) / 3);
    const problems = leaseTimingProblems({
      leaseDurationSeconds: opts.leaseDurationSeconds,
      renewDeadlineMs: this.renewDeadlineMs,
      retryPeriodMs: opts.retryPeriodMs,
      writeTimeoutMs: opts.writeTimeoutMs ?? opts.timeoutMs,
    });
    if (problems.length > 0) throw new Error(`lease ${opts.namespace}/${opts.name}: ${problems.join("; ")}`);
    this.api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
    this.nowMs = opts.nowMs ?? (() => Date.now());
    this.monotonicMs = opts.monotonicMs ?? (() => performance.now());
    this.health = new FailureLog(`lease ${opts.namespace}/${opts.name}`, opts.logger);
  }

  /** True while this replica leads: it renewed within the renew deadline by the monotonic clock. */
  get isLeader(): boolean {
    return this.holds();
  }

  /** How many times this replica became leader. */
  get leadershipsWon(): number {
    return this.transitions;
  }

  /** The token this leadership stamps on its decisions; undefined when not leading. */
  leaderToken(): LeaderToken | undefined {
    return this.holds() ? this.token : undefined;
  }

  /**
   * Call right before each write: throws `NotLeaderError` unless this replica
   * leads now, else returns the signal that aborts the write on step-down.
   */
  writePermit(): AbortSignal {
    const leadership = this.leadership;
    if (!this.holds() || leadership === undefined)
      throw new NotLeaderError(
        `replica ${this.opts.identity} does not hold lease ${this.opts.namespace}/${this.opts.name}`,
      );
    return leadership.signal;
  }

  /**
   * True while some replica keeps the Lease: this one leads, or the record
   * changed (a renewal) within the lease duration by this replica's clock.
   */
  leaderRenewing(): boolean {
    if (this.holds()) return true;
    const seen = this.observed;
    return seen !== undefined && seen.holder !== "" && this.monotonicMs() - seen.atMs <= seen.durationMs;
  }

  start(): void {
    if (this.running !== undefined) return;
    const loop = async (): Promise<void> => {
      while (!this.stopped) {
        await this.round();
        if (this.stopped) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.opts.retryPeriodMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    };
    this.running = loop();
  }

  /** Stops competing; a leader releases the Lease unless `release` is false. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    if (this.holds() && opts.release !== false) {
      // No write of this leadership may land after the release.
      this.stepDown("stopping");
      await this.release();
    }
    this.stepDown("stopped");
  }

  /** One renew-or-acquire attempt; public for tests that step it. */
  async round(): Promise<void> {
    try {
      await this.renewOrAcquire();
    } catch (error) {
      // Past the renew deadline, holds() steps down; a lost race (409) is no failure.
      this.holds();
      if (statusCode(error) !== 409) this.health.failed(error, this.nowMs());
      return;
    }
    this.health.succeeded(this.nowMs());
  }

  /** Leading, judged now: past the renew deadline this replica steps down before answering. */
  private holds(): boolean {
    if (!this.leading) return false;
    if (this.monotonicMs() - this.lastRenewMs < this.renewDeadlineMs) return true;
    this.stepDown("could not renew the lease before the renew deadline");
    return false;
  }

  private async renewOrAcquire(): Promise<void> {
    const lease = await this.read();
    // The record was read by now: a follower counts the lease from here, never from before its read.
    const readMs = this.monotonicMs();
    if (lease === undefined) {
      await this.create();
      return;
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const key = `${holder}|${String(timeOf(spec.renewTime) ?? "")}|${lease.metadata?.resourceVersion ?? ""}`;
    const durationMs = (spec.leaseDurationSeconds ?? this.opts.leaseDurationSeconds) * 1000;
    if (this.observed?.key !== key) this.observed = { key, atMs: readMs, holder, durationMs };
    if (holder === this.opts.identity) {
      // A replica that stepped down (or restarted under the same name) takes its own Lease anew:
      // a new transition, so commits of the earlier leadership are older at the fence.
      await this.write(lease, !this.holds());
      return;
    }
    if (this.holds()) this.stepDown("another replica holds the lease", { holder });
    if (holder === "" || readMs - this.observed.atMs > durationMs) await this.write(lease, true);
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease(
        { namespace: this.opts.namespace, name: this.opts.name },
        callOptions(this.opts.timeoutMs),
      );
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw new Error(`read Lease ${this.opts.namespace}/${this.opts.name}`, { cause: error });
    }
  }

  private spec(now: number, acquireMs: number, transitions: number): V1LeaseSpec {
    // MicroTime strings pass the client's serializer unchanged; a Date would lose digits.
    return {
      holderIdentity: this.opts.identity,
      leaseDurationSeconds: this.opts.leaseDurationSeconds,
      acquireTime: microTime(acquireMs) as unknown as Date,
      renewTime: microTime(now) as unknown as Date,
      leaseTransitions: transitions,
    };
  }

  private async create(): Promise<void> {
    const now = this.nowMs();
    const sentMs = this.monotonicMs();
    try {
      await this.api.createNamespacedLease(
        {
          namespace: this.opts.namespace,
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name: this.opts.name, namespace: this.opts.namespace },
            spec: this.spec(now, now, 0),
          },
        },
        callOptions(this.opts.timeoutMs),
      );
      this.renewed(sentMs, 0, true);
    } catch (error) {
      if (statusCode(error) === 409) return; // another replica created it first
      throw new Error(`create Lease ${this.opts.namespace}/${this.opts.name}`, { cause: error });
    }
  }

  private async write(lease: V1Lease, takeover: boolean): Promise<void> {
    const now = this.nowMs();
    // Leadership is counted from before the renewal is sent: it cannot be applied, or seen by a follower, earlier.
    const sentMs = this.monotonicMs();
    const acquireMs = takeover ? now : (timeOf(lease.spec?.acquireTime) ?? now);
    const transitions = (lease.spec?.leaseTransitions ?? 0) + (takeover ? 1 : 0);
    await this.api.replaceNamespacedLease(
      {
        namespace: this.opts.namespace,
        name: this.opts.name,
        body: { ...lease, spec: this.spec(now, acquireMs, transitions) },
      },
      callOptions(this.opts.timeoutMs),
    );
    if (takeover)
      this.opts.logger.info("acquired the lease", {
        lease: `${this.opts.namespace}/${this.opts.name}`,
        identity: this.opts.identity,
        transitions,
      });
    this.renewed(sentMs, transitions, takeover);
  }

  /** A renewal (or acquisition) sent at `sentMs` (monotonic) succeeded. */
  private renewed(sentMs: number, transitions: number, takeover: boolean): void {
    if (takeover) this.stepDown("taking the lease anew");
    this.lastRenewMs = sentMs;
    // A call that outlived the deadline (a pause, a slow server) renewed too late to lead on.
    if (this.monotonicMs() - sentMs >= this.renewDeadlineMs) {
      this.stepDown("the renewal landed after the renew deadline");
      return;
    }
    // Renewals copy the count they read: one raised by hand (docs/controller.md, Leadership) takes effect here.
    this.token = { holder: this.opts.identity, transitions };
    if (!this.leading) {
      this.leadership = new AbortController();
      this.leading = true;
      this.transitions += 1;
      this.opts.onStartedLeading?.();
    }
    clearTimeout(this.deadlineTimer);
    const remainingMs = this.lastRenewMs + this.renewDeadlineMs - this.monotonicMs();
    this.deadlineTimer = setTimeout(() => this.holds(), Math.max(0, remainingMs) + 1);
    this.deadlineTimer.unref();
  }

  private async release(): Promise<void> {
    try {
      const lease = await this.read();
      if (lease === undefined || lease.spec?.holderIdentity !== this.opts.identity) return;
      const now = this.nowMs();
      await this.api.replaceNamespacedLease(
        {
          namespace: this.opts.namespace,
          name: this.opts.name,
          body: {
            ...lease,
            spec: {
              ...lease.spec,
              holderIdentity: "",
              leaseDurationSeconds: 1,
              renewTime: microTime(now) as unknown as Date,
              acquireTime: microTime(timeOf(lease.spec.acquireTime) ?? now) as unknown as Date,
            },
          },
        },
        callOptions(this.opts.timeoutMs),
      );
      this.opts.logger.info("released the lease", { lease: `${this.opts.namespace}/${this.opts.name}` });
    } catch (error) {
      // The others take over after the lease duration instead.
      this.opts.logger.warn("could not release the lease", { error });
    }
  }

  /** Ends this leadership: in-flight writes are aborted, later ones refused. */
  private stepDown(why: string, detail: Record<string, unknown> = {}): void {
    if (!this.leading) return;
    this.leading = false;
    clearTimeout(this.deadlineTimer);
    this.leadership?.abort(new NotLeaderError(`replica ${this.opts.identity} stepped down: ${why}`));
    this.leadership = undefined;
    this.token = undefined;
    if (why !== "stopped" && why !== "stopping" && why !== "taking the lease anew")
      this.opts.logger.warn(`${why}; stepping down`, { lease: `${this.opts.namespace}/${this.opts.name}`, ...detail });
    this.opts.onStoppedLeading?.();
  }
}
