/**
 * Leader election on a coordination.k8s.io/v1 Lease, so that of several
 * replicas only one plans and writes. Every `retryPeriodMs` each replica reads
 * the Lease: the holder renews it, the others take it over once it has not
 * changed for `leaseDurationSeconds` as measured on their own clock (no
 * trust in the holder's clock). Every write carries the resourceVersion it
 * read, so two replicas can never both win the same round.
 *
 * A leader that cannot renew for `renewDeadlineMs` (shorter than the lease)
 * steps down before anyone else may take over. Stopping releases the Lease,
 * so a rollout hands over at once instead of after a lease duration.
 */
import {
  ApiException,
  CoordinationV1Api,
  type KubeConfig,
  type V1Lease,
  type V1LeaseSpec,
} from "@kubernetes/client-node";
import { FailureLog } from "../retry/backoff.js";
import type { Logger } from "../telemetry/logger.js";
import { callOptions } from "./call-options.js";

export interface LeaderElectorOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica: the pod name. */
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  /** How often to renew or try to acquire. */
  readonly retryPeriodMs: number;
  /** Upper bound of one API call. */
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly nowMs?: () => number;
  readonly onStartedLeading?: () => void;
  readonly onStoppedLeading?: () => void;
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
  /** Lease rounds are logged when they start failing and when they work again, not every round. */
  private readonly health: FailureLog;
  private leading = false;
  private lastRenewMs = 0;
  /** The Lease record last seen and when this replica saw it change. */
  private observed: { key: string; atMs: number; holder: string; durationMs: number } | undefined;
  /** Ends the wait between rounds early (on stop). */
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private transitions = 0;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
    this.nowMs = opts.nowMs ?? (() => Date.now());
    this.health = new FailureLog(`lease ${opts.namespace}/${opts.name}`, opts.logger);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** How many times this replica became leader. */
  get leadershipsWon(): number {
    return this.transitions;
  }

  /**
   * True while some replica keeps the Lease: this one leads, or the record
   * changed (a renewal) within the lease duration by this replica's clock.
   */
  leaderRenewing(): boolean {
    if (this.leading) return true;
    const seen = this.observed;
    return seen !== undefined && seen.holder !== "" && this.nowMs() - seen.atMs <= seen.durationMs;
  }

  get renewDeadlineMs(): number {
    return Math.floor((this.opts.leaseDurationSeconds * 1000 * 2) / 3);
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
    if (this.leading && opts.release !== false) await this.release();
    this.setLeading(false);
  }

  /** One renew-or-acquire attempt; public for tests that step it. */
  async round(): Promise<void> {
    const now = this.nowMs();
    try {
      await this.renewOrAcquire(now);
    } catch (error) {
      if (this.leading && now - this.lastRenewMs > this.renewDeadlineMs) {
        this.opts.logger.warn("could not renew the lease before the renew deadline; stepping down", { error });
        this.setLeading(false);
      } else if (statusCode(error) !== 409) {
        this.health.failed(error, now);
      }
      return;
    }
    this.health.succeeded(now);
  }

  private async renewOrAcquire(now: number): Promise<void> {
    const lease = await this.read();
    if (lease === undefined) {
      await this.create(now);
      return;
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const key = `${holder}|${String(timeOf(spec.renewTime) ?? "")}|${lease.metadata?.resourceVersion ?? ""}`;
    const durationMs = (spec.leaseDurationSeconds ?? this.opts.leaseDurationSeconds) * 1000;
    if (this.observed?.key !== key) this.observed = { key, atMs: now, holder, durationMs };
    if (holder === this.opts.identity) {
      await this.write(lease, now, false);
      return;
    }
    if (this.leading) {
      this.opts.logger.warn("another replica holds the lease; stepping down", { holder });
      this.setLeading(false);
    }
    if (holder === "" || now - this.observed.atMs > durationMs) await this.write(lease, now, true);
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

  private async create(now: number): Promise<void> {
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
      this.lastRenewMs = now;
      this.setLeading(true);
    } catch (error) {
      if (statusCode(error) === 409) return; // another replica created it first
      throw new Error(`create Lease ${this.opts.namespace}/${this.opts.name}`, { cause: error });
    }
  }

  private async write(lease: V1Lease, now: number, takeover: boolean): Promise<void> {
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
    this.lastRenewMs = now;
    if (takeover)
      this.opts.logger.info("acquired the lease", {
        lease: `${this.opts.namespace}/${this.opts.name}`,
        identity: this.opts.identity,
      });
    this.setLeading(true);
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

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (leading) {
      this.transitions += 1;
      this.opts.onStartedLeading?.();
    } else {
      this.opts.onStoppedLeading?.();
    }
  }
}
