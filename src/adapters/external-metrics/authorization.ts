/**
 * Authorization delegated to the API server: one SubjectAccessReview per
 * (user, namespace, metric), so RBAC on `external.metrics.k8s.io` decides who
 * reads what. Answers are kept briefly, as the API server's own delegating
 * authorizer does, so a busy HPA does not double the API server's load.
 */
import { AuthorizationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { callOptions } from "../kubernetes/call-options.js";
import type { UserInfo } from "./authentication.js";

export const externalMetricsGroup = "external.metrics.k8s.io";
export const externalMetricsVersion = "v1beta1";

export interface Access {
  readonly namespace: string;
  /** The metric name: RBAC `resources` of the external metrics group. */
  readonly resource: string;
}

export interface Verdict {
  readonly allowed: boolean;
  readonly reason: string;
}

/** The port the server asks; tests pass a fake. */
export interface Authorizer {
  authorize(user: UserInfo, access: Access): Promise<Verdict>;
}

export class SubjectAccessReviewAuthorizer implements Authorizer {
  private readonly api: AuthorizationV1Api;
  private readonly cache = new Map<string, { verdict: Verdict; untilMs: number }>();

  constructor(
    kubeConfig: KubeConfig,
    private readonly opts: { timeoutMs: number; cacheMs: number; nowMs: () => number },
  ) {
    this.api = kubeConfig.makeApiClient(AuthorizationV1Api);
  }

  async authorize(user: UserInfo, access: Access): Promise<Verdict> {
    const key = JSON.stringify([user.username, user.uid, user.groups, user.extra, access.namespace, access.resource]);
    const now = this.opts.nowMs();
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.untilMs > now) return cached.verdict;
    const review = await this.api.createSubjectAccessReview(
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: user.username,
            ...(user.uid === undefined ? {} : { uid: user.uid }),
            groups: [...user.groups],
            extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])),
            resourceAttributes: {
              group: externalMetricsGroup,
              version: externalMetricsVersion,
              resource: access.resource,
              namespace: access.namespace,
              // The API server reads `GET ./namespaces/<ns>/<metric>` as a list of that resource, and checks `list` first.
              verb: "list",
            },
          },
        },
      },
      callOptions(this.opts.timeoutMs),
    );
    const verdict: Verdict = {
      allowed: review.status?.allowed === true && review.status.denied !== true,
      reason: review.status?.reason ?? "",
    };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { verdict, untilMs: now + this.opts.cacheMs });
    return verdict;
  }
}
