/**
 * The three admission webhooks, from a decoded request to a verdict:
 * defaulting (mutating) and validation of ModelDeploymentScalers, and the
 * binding fence on ModelDeployments. The rules live in the core; this file
 * only looks up the objects they need, with a timeout on every lookup.
 */
import { scalerDefaultingPatch } from "../../core/api/defaulting-patch.js";
import { formatProblem, valueAt } from "../../core/api/problem.js";
import { parseTarget, validateScaler as validateScalerObject } from "../../core/api/validation.js";
import { admitTargetUpdate, fenceScalerToLookUp, type ScalerLookup } from "../../core/binding/fence.js";
import { allowed, denied, type AdmissionRequest, type Verdict } from "./review.js";

/** The reads the webhooks need; `KubeResources` implements them. */
export interface WebhookLookups {
  getTarget(namespace: string, name: string): Promise<unknown | undefined>;
  getScaler(namespace: string, name: string): Promise<unknown | undefined>;
}

export interface HandlerOptions {
  readonly lookups: WebhookLookups;
  /** The username of the controller's own requests (see docs/webhooks.md). */
  readonly controllerIdentity: () => string;
  /** Upper bound of one lookup; the API server's own timeout is longer. */
  readonly lookupTimeoutMs: number;
  /** How often Prometheus scrapes the engines, seconds: a scaler window shorter than two scrapes is warned about. */
  readonly engineScrapeIntervalSeconds: number;
}

export type Handler = (request: AdmissionRequest) => Promise<Verdict>;

export const webhookPaths = {
  mutateScaler: "/mutate/modeldeploymentscalers",
  validateScaler: "/validate/modeldeploymentscalers",
  validateTarget: "/validate/modeldeployments",
} as const;

async function withTimeout<T>(what: string, timeoutMs: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function only(operations: readonly string[], request: AdmissionRequest): boolean {
  return operations.includes(request.operation);
}

export function createHandlers(opts: HandlerOptions): Record<keyof typeof webhookPaths, Handler> {
  const lookup = <T>(what: string, work: () => Promise<T>): Promise<T> =>
    withTimeout(what, opts.lookupTimeoutMs, work());

  const mutateScaler: Handler = async (request) => {
    if (!only(["CREATE", "UPDATE"], request)) return allowed();
    return allowed({ patch: scalerDefaultingPatch(request.object) });
  };

  const validateScaler: Handler = async (request) => {
    if (!only(["CREATE", "UPDATE"], request)) return allowed();
    const old =
      request.operation === "UPDATE" && typeof request.oldObject === "object" && request.oldObject !== null
        ? request.oldObject
        : undefined;
    // Metadata-only updates (finalizers, labels, deletion) pass: the spec was
    // admitted when written, and refusing them could block a finalizer forever.
    const oldSpec = old === undefined ? undefined : valueAt(old, ["spec"]);
    if (typeof oldSpec === "object" && oldSpec !== null && sameJson(oldSpec, valueAt(request.object, ["spec"])))
      return allowed();
    const warnings: string[] = [];
    const targetName = valueAt(request.object, ["spec", "targetRef", "name"]);
    let target;
    if (typeof targetName === "string" && targetName !== "" && request.namespace !== undefined) {
      const raw = await lookup(`get ModelDeployment ${request.namespace}/${targetName}`, () =>
        opts.lookups.getTarget(request.namespace ?? "", targetName),
      );
      if (raw !== undefined) {
        const parsed = parseTarget(raw);
        if (parsed.ok) target = parsed.value;
        else
          warnings.push(
            `target ${targetName} does not have the ModelDeployment shape; target checks skipped: ${parsed.problems.map(formatProblem).join("; ")}`,
          );
      }
    }
    const result = validateScalerObject(request.object, {
      ...(old === undefined ? {} : { old }),
      ...(target === undefined ? {} : { target }),
      engineScrapeIntervalSeconds: opts.engineScrapeIntervalSeconds,
    });
    warnings.push(...result.warnings.map(formatProblem));
    if (result.ok) return allowed({ warnings });
    const problems = result.problems.map(formatProblem);
    return denied(
      422,
      `ModelDeploymentScaler ${request.namespace ?? ""}/${request.name ?? ""} is invalid (${problems.length} problem${problems.length === 1 ? "" : "s"}): ${problems.join("; ")}`,
      warnings,
    );
  };

  const validateTarget: Handler = async (request) => {
    if (!only(["CREATE", "UPDATE"], request)) return allowed();
    const controllerIdentity = opts.controllerIdentity();
    const old = request.operation === "UPDATE" ? request.oldObject : undefined;
    const update = { old: old ?? undefined, new: request.object, userInfo: request.userInfo, controllerIdentity };
    const scalerName = fenceScalerToLookUp(update);
    let scalerLookup: ScalerLookup | undefined;
    if (scalerName !== undefined) {
      const raw = await lookup(`get ModelDeploymentScaler ${request.namespace ?? ""}/${scalerName}`, () =>
        opts.lookups.getScaler(request.namespace ?? "", scalerName),
      );
      const uid = valueAt(raw, ["metadata", "uid"]);
      scalerLookup =
        raw === undefined ? { state: "absent" } : { state: "present", uid: typeof uid === "string" ? uid : "" };
    }
    const verdict = admitTargetUpdate({ ...update, ...(scalerLookup === undefined ? {} : { scalerLookup }) });
    return verdict.allowed ? allowed() : denied(403, verdict.message);
  };

  return { mutateScaler, validateScaler, validateTarget };
}
