/**
 * The leadership builder: who this replica is (its Lease identity and the username the binding fence
 * trusts) and the Lease elector. The elector is built here and started by the loop builder, once the
 * servers answer; asking the API server for the identity starts here and is stopped on unwind.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { AuthenticationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { callOptions } from "../../adapters/kubernetes/call-options.js";
import { LeaderElector } from "../../adapters/kubernetes/leader.js";
import { backoffDelayMs } from "../../adapters/retry/backoff.js";
import { FailureLog } from "../../adapters/retry/failure-log.js";
import type { Logger } from "../../adapters/telemetry/logger.js";
import type { Config } from "../config.js";
import type { StartContext } from "./context.js";

export interface Leadership {
  /** Absent without a Lease: this replica always leads. */
  readonly elector: LeaderElector | undefined;
  /** The username the fence trusts; "" until known (the fence then trusts no one). */
  readonly controllerIdentity: () => string;
  /** True while this replica may plan and write. */
  readonly leading: () => boolean;
  /** True while this replica leads and its last renewal is within the deadline. */
  readonly leaderRenewing: () => boolean;
}

/** The username of this process's own API requests, as the API server sees it. */
export async function whoAmI(kubeConfig: KubeConfig, timeoutMs: number): Promise<string> {
  try {
    const review = await kubeConfig
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview(
        { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
        callOptions(timeoutMs),
      );
    const username = review.status?.userInfo?.username ?? "";
    if (username === "") throw new Error("the answer names no user");
    return username;
  } catch (error) {
    throw new Error("ask the API server who this controller is (SelfSubjectReview)", { cause: error });
  }
}

const identityBackoff = { initialMs: 1_000, maxMs: 10_000 } as const;

/** Resolves the controller identity now, or keeps asking in the background. */
function controllerIdentitySource(
  config: Config,
  kubeConfig: KubeConfig,
  logger: Logger,
): { get: () => string; stop: () => void } {
  let identity = config.controllerIdentity;
  if (identity !== "") return { get: () => identity, stop: () => undefined };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // Warned once when asking starts failing, not on every retry; retries back off to 10 s, so the fence trusts this replica soon after the API server answers.
  const failures = new FailureLog(
    "asking the API server for the controller identity (the fence refuses every commit until it is known)",
    logger,
  );
  const attempt = (): void => {
    whoAmI(kubeConfig, config.kubeTimeoutMs).then(
      (name) => {
        identity = name;
        failures.succeeded(Date.now());
        logger.info("the binding fence trusts commits from this identity", { controllerIdentity: name });
      },
      (error: unknown) => {
        const count = failures.failed(error, Date.now());
        if (!stopped) timer = setTimeout(attempt, backoffDelayMs(count, Math.random(), identityBackoff));
      },
    );
  };
  attempt();
  return {
    get: () => identity,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

function leaderElector(ctx: StartContext, replica: string): LeaderElector | undefined {
  const { config, logger, metrics } = ctx;
  if (config.leaseName === "") return undefined;
  return new LeaderElector({
    kubeConfig: ctx.kubeConfig,
    namespace: config.podNamespace,
    name: config.leaseName,
    identity: replica,
    leaseDurationSeconds: config.leaseDurationSeconds,
    retryPeriodMs: config.leaseRetryMs,
    timeoutMs: Math.min(config.kubeTimeoutMs, config.leaseRetryMs * 2),
    renewDeadlineMs: config.leaseRenewDeadlineMs,
    // Every write of the controller is bounded by this timeout; the Lease timing is checked against it.
    writeTimeoutMs: config.kubeTimeoutMs,
    logger: logger.child({ replica }),
    onStartedLeading: () => {
      metrics.setLeading(true);
      logger.info("leading: the control loop runs on this replica", { replica });
    },
    onStoppedLeading: () => {
      metrics.setLeading(false);
      logger.info("following: the control loop stops on this replica", { replica });
    },
  });
}

export function buildLeadership(ctx: StartContext): Leadership {
  const { config } = ctx;
  const replica = config.podName !== "" ? config.podName : `${hostname()}-${randomBytes(3).toString("hex")}`;
  const elector = leaderElector(ctx, replica);
  const identity = controllerIdentitySource(config, ctx.kubeConfig, ctx.logger);
  ctx.lifecycle.onStop("controller identity", identity.stop);
  ctx.metrics.setLeading(elector === undefined);
  return {
    elector,
    controllerIdentity: identity.get,
    leading: () => elector === undefined || elector.isLeader,
    // Without a Lease this replica always leads, and its loop runs while it serves.
    leaderRenewing: () => elector === undefined || elector.leaderRenewing(),
  };
}
