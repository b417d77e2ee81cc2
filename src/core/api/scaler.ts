/**
 * The ModelDeploymentScaler resource (worker.gpustack.ai/v1, short name mds):
 * the single source of its fields, ranges and defaults. The CRD schema, the
 * docs tables and the chart's examples are generated from these schemas.
 *
 * Defaulting is parsing: `ScalerSpecSchema.parse(input)` returns the defaulted
 * spec, and parsing that output again returns it unchanged (idempotent).
 */
import { z } from "zod";
import { parseQuantityChecked, parseQuantityExact } from "./quantity.js";
import { compareRational, rational, type Rational } from "./rational.js";

export const apiGroup = "worker.gpustack.ai";
export const apiVersion = `${apiGroup}/v1`;
export const scalerKind = "ModelDeploymentScaler";

/** Metadata read by the CRD and docs generators. */
export interface FieldMeta {
  /** The value stored when the field is omitted. */
  readonly default?: unknown;
  /** Zero is replaced by the default too (the specification's "zero or omission stores"). */
  readonly zeroMeansDefault?: boolean;
  /** Non-positive values are replaced by the default (the predictive filter noises). */
  readonly nonPositiveMeansDefault?: boolean;
  /** A Kubernetes quantity: a string or an integer in the CRD. */
  readonly quantity?: boolean;
  /** The accepted range in words, for the docs table when JSON Schema cannot say it (quantities). */
  readonly range?: string;
  /** The field cannot change after creation (a CEL transition rule in the CRD). */
  readonly immutable?: boolean;
}

/** A field stored as its default when omitted, and optionally when zero. */
function defaulted<T extends z.ZodType<number>>(inner: T, value: number, opts: { zeroMeansDefault?: boolean } = {}) {
  const zero = opts.zeroMeansDefault === true;
  return inner
    .optional()
    .transform((v) => (v === undefined || (zero && v === 0) ? value : v))
    .meta({ default: value, ...(zero ? { zeroMeansDefault: true } : {}) } satisfies FieldMeta);
}

const integer = (min: number, max: number) => z.number().int().min(min).max(max);

/** A replica count bound: the scaler never scales to zero, and the target caps roles at 1024. */
export const ReplicaBoundSchema = integer(1, 1024);

/** The largest quantity the schema accepts for a field, with its text for messages. */
interface QuantityBounds {
  readonly positive: boolean;
  readonly max?: { readonly value: Rational; readonly text: string };
}

/**
 * A Kubernetes quantity, stored as written (integers become their decimal
 * string). A non-integer JSON number is refused: the CRD accepts integers or
 * strings, so `0.5` must be written `"0.5"`.
 */
function quantity(bounds: QuantityBounds) {
  return z
    .union([z.string(), z.number()], { error: 'must be a quantity: a string such as "500m" or an integer' })
    .superRefine((raw, ctx) => {
      const parsed = parseQuantityChecked(raw);
      if ("error" in parsed) {
        const message =
          typeof raw === "number" && Number.isFinite(raw) && parsed.error === "syntax"
            ? `must be an integer or a quoted quantity such as "${raw}"`
            : parsed.error === "range"
              ? "is out of range for a Kubernetes quantity"
              : 'is not a Kubernetes quantity (for example "0.5", "500m" or "2k")';
        ctx.addIssue({ code: "custom", message });
        return;
      }
      if (bounds.positive && parsed.value.num <= 0n)
        ctx.addIssue({ code: "custom", message: "must be a positive quantity" });
      if (bounds.max !== undefined && compareRational(parsed.value, bounds.max.value) > 0) {
        ctx.addIssue({ code: "custom", message: `must be at most ${bounds.max.text}` });
      }
    })
    .transform((raw) => String(raw))
    .meta({ quantity: true, range: quantityRange(bounds) } satisfies FieldMeta);
}

function quantityRange(bounds: QuantityBounds): string {
  const parts = [bounds.positive ? "> 0" : undefined, bounds.max === undefined ? undefined : `<= ${bounds.max.text}`];
  return parts.filter((p) => p !== undefined).join(", ");
}

const positiveQuantity = () => quantity({ positive: true });

function defaultedQuantity(value: string, opts: { nonPositiveMeansDefault?: boolean; max?: string } = {}) {
  const lenient = opts.nonPositiveMeansDefault === true;
  const max =
    opts.max === undefined ? undefined : { value: parseQuantityExact(opts.max) ?? rational(0n), text: opts.max };
  const bounds: QuantityBounds = { positive: !lenient, ...(max === undefined ? {} : { max }) };
  return quantity(bounds)
    .optional()
    .transform((v) => {
      if (v === undefined) return value;
      const parsed = parseQuantityExact(v);
      return lenient && (parsed === undefined || parsed.num <= 0n) ? value : v;
    })
    .meta({
      default: value,
      quantity: true,
      range: lenient ? "any quantity; <= 0 stores the default" : quantityRange(bounds),
      ...(lenient ? { nonPositiveMeansDefault: true } : {}),
    } satisfies FieldMeta);
}

/** Role and object names: Kubernetes DNS labels. */
export const DnsLabelSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    "must be a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit",
  );
const dnsLabel = DnsLabelSchema;

const objectName = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
    "must be a Kubernetes object name: lower-case letters, digits, '-' and '.'",
  );

export const modes = ["Shadow", "Active"] as const;
export const algorithmTypes = ["Proportional", "TokenThroughput", "Predictive"] as const;
export const proportionalMetrics = [
  "QueueDepth",
  "RunningRequests",
  "WaitingRequests",
  "PromptTokensPerSecond",
  "GenerationTokensPerSecond",
  "TotalTokensPerSecond",
] as const;
export const rebalancePolicies = ["Opposing", "Priority", "Disabled"] as const;
export const stepPolicyTypes = ["Pods", "Percent"] as const;

export const StepPolicySchema = z.strictObject({
  type: z.enum(stepPolicyTypes).describe("Pods counts serving replicas; Percent uses the current count and rounds up."),
  value: z.number().int().min(0).describe("Nonnegative; zero prevents movement in this direction."),
});

export const RoleBoundsSchema = z.strictObject({
  name: dnsLabel.describe("A role name on the target; unique."),
  minReplicas: defaulted(ReplicaBoundSchema, 1).describe("Floor, 1 to 1024."),
  maxReplicas: ReplicaBoundSchema.describe("Ceiling, 1 to 1024, at least minReplicas. Required."),
  floorReplicasByUtcHour: z
    .array(ReplicaBoundSchema)
    .length(24)
    .optional()
    .describe(
      "Extension: 24 counts, one per UTC hour from 00:00; the role's recommendation is raised to the hour's count before the bounds clamp it.",
    ),
});

export const RatioSchema = z.strictObject({
  numeratorRole: dnsLabel.describe("Scaled role counted above the line."),
  denominatorRole: dnsLabel.describe("Scaled role counted below the line; distinct from numeratorRole."),
  target: positiveQuantity().optional().describe("Preferred numerator/denominator ratio; inside min and max."),
  min: positiveQuantity().optional().describe("Lowest allowed ratio."),
  max: positiveQuantity().optional().describe("Highest allowed ratio."),
});

export const RoleTargetSchema = z.strictObject({
  name: dnsLabel.describe("A scaled role; unique."),
  target: positiveQuantity().describe("Per ready replica: requests for request metrics, tokens per second for rates."),
});

export const ProportionalSchema = z.strictObject({
  metric: z.enum(proportionalMetrics).describe("The measured signal."),
  tolerance: defaultedQuantity("0.1", { max: "1" }).describe("Deadband around the target; positive and at most 1."),
  roleTargets: z.array(RoleTargetSchema).min(1).max(64).describe("One target per scaled role."),
});

export const TokenThroughputSchema = z.strictObject({
  prefillTargetTokensPerSecond: positiveQuantity()
    .optional()
    .describe("Cache-missed prompt capacity of one Prefill replica."),
  decodeTargetTokensPerSecond: positiveQuantity().optional().describe("Generation capacity of one Decode replica."),
  serverTargetTokensPerSecond: positiveQuantity().optional().describe("Combined capacity of one Server replica."),
  stableWindowSeconds: defaulted(integer(30, 600), 180).describe("Stable averaging window, 30 to 600 seconds."),
  panicWindowSeconds: defaulted(integer(10, 300), 60).describe("Panic averaging window, 10 to 300 seconds."),
  panicThreshold: defaultedQuantity("2").describe("Panic starts at this multiple of ready capacity."),
  ttftTargetMilliseconds: defaultedQuantity("500").describe("p95 time-to-first-token target (Prefill, Server)."),
  itlTargetMilliseconds: defaultedQuantity("50").describe("p95 inter-token latency target (Decode, Server)."),
  queueTimeTargetMilliseconds: positiveQuantity()
    .optional()
    .describe(
      "p95 queue-time target (Prefill, Server): the waiting the TTFT SLO leaves beside a prompt's own prefill. The latency guard also holds above it and grows above 1.2 times it; unset, only TTFT and ITL are guarded.",
    ),
});

export const PredictiveSchema = z.strictObject({
  tokenThroughput: TokenThroughputSchema.optional()
    .transform((v) => v ?? TokenThroughputSchema.parse({}))
    .describe("The fallback TokenThroughput parameters."),
  horizonSeconds: defaulted(integer(30, 600), 300).describe("Forecast horizon, 30 to 600 seconds."),
  prefillTokenCapacityPerReplica: positiveQuantity()
    .optional()
    .describe("Forecast prompt capacity of one Prefill replica."),
  decodeTokenCapacityPerReplica: positiveQuantity()
    .optional()
    .describe("Forecast generation capacity of one Decode replica."),
  serverTokenCapacityPerReplica: positiveQuantity()
    .optional()
    .describe("Forecast combined capacity of one Server replica."),
  qLevel: defaultedQuantity("1", { nonPositiveMeansDefault: true }).describe("Process noise of the demand level."),
  qTrend: defaultedQuantity("0.1", { nonPositiveMeansDefault: true }).describe("Process noise of the demand trend."),
  measurementNoise: defaultedQuantity("10", { nonPositiveMeansDefault: true }).describe("Observation noise."),
  minPoints: defaulted(integer(1, 64), 6).describe("Observations before the forecast is used, 1 to 64."),
});

/**
 * The algorithm block before type inference: `type` may be omitted, and the
 * parameter blocks are checked against it in validation (exactly one, matching).
 */
export const AlgorithmSchema = z.strictObject({
  type: z
    .enum(algorithmTypes)
    .optional()
    .describe("Inferred from the parameter block when omitted, else TokenThroughput."),
  proportional: ProportionalSchema.optional().describe(
    "Parameters of Proportional: one metric over a per-replica target.",
  ),
  tokenThroughput: TokenThroughputSchema.optional().describe(
    "Parameters of TokenThroughput: token rates over capacities, with latency guards.",
  ),
  predictive: PredictiveSchema.optional().describe(
    "Parameters of Predictive: a demand forecast with a TokenThroughput fallback.",
  ),
});

export const ScaleUpSchema = z.strictObject({
  stabilizationWindowSeconds: defaulted(integer(0, 600), 0).describe(
    "History needed before growth, 0 to 600; zero disables the wait.",
  ),
  maxStepReplicas: defaulted(integer(0, 1024), 4, { zeroMeansDefault: true }).describe(
    "Replicas one pass may add; zero or omission stores 4.",
  ),
  maxStepPercent: defaulted(integer(0, 1000), 100, { zeroMeansDefault: true }).describe(
    "Percent of the current count one pass may add, 0 to 1000; zero or omission stores 100.",
  ),
  stepPolicy: StepPolicySchema.optional().describe("Replaces both bounds with one unit; zero prevents scale-up."),
});

export const ScaleDownSchema = z.strictObject({
  stabilizationWindowSeconds: defaulted(integer(0, 1800), 300, { zeroMeansDefault: true }).describe(
    "Highest recent recommendation is the floor, 0 to 1800; zero or omission stores 300.",
  ),
  cooldownAfterAbortSeconds: defaulted(integer(0, 3600), 300, { zeroMeansDefault: true }).describe(
    "No scale-down after an aborted retirement, 0 to 3600; zero or omission stores 300.",
  ),
  decodePostScaleUpGraceSeconds: defaulted(integer(0, 3600), 120, { zeroMeansDefault: true }).describe(
    "Decode roles hold after growth, 0 to 3600; zero or omission stores 120.",
  ),
  stepPolicy: StepPolicySchema.optional().describe(
    "Replaces the default one replica per pass; zero prevents scale-down.",
  ),
});

export const BehaviorSchema = z.strictObject({
  scaleUp: ScaleUpSchema.optional()
    .transform((v) => v ?? ScaleUpSchema.parse({}))
    .describe("Pacing of growth."),
  scaleDown: ScaleDownSchema.optional()
    .transform((v) => v ?? ScaleDownSchema.parse({}))
    .describe("Pacing of shrinkage and its guards."),
});

export const RebalanceSchema = z.strictObject({
  policy: z
    .enum(rebalancePolicies)
    .optional()
    .transform((v) => v ?? "Opposing")
    .meta({ default: "Opposing" } satisfies FieldMeta)
    .describe("Which roles may donate capacity after a scale-up times out."),
  priority: z
    .array(dnsLabel)
    .max(64)
    .optional()
    .describe("Scaled role names, highest priority first (Priority policy)."),
});

export const SamplingSchema = z.strictObject({
  intervalSeconds: defaulted(integer(5, 300), 15).describe("Sampling cadence, 5 to 300 seconds."),
  pendingTimeoutSeconds: defaulted(integer(60, 1200), 300).describe("Wait for scale-up admission, 60 to 1200 seconds."),
});

export const ScalerSpecSchema = z.strictObject({
  targetRef: z
    .strictObject({
      name: objectName.meta({
        immutable: true,
        description: "ModelDeployment in this namespace; immutable.",
      } satisfies FieldMeta & { description: string }),
    })
    .describe("The ModelDeployment this scaler plans for."),
  mode: z
    .enum(modes)
    .optional()
    .transform((v) => v ?? "Shadow")
    .meta({ default: "Shadow" } satisfies FieldMeta)
    .describe("Shadow recommends only; Active commits through the binding fence."),
  suspend: z
    .boolean()
    .optional()
    .transform((v) => v ?? false)
    .meta({ default: false } satisfies FieldMeta)
    .describe("Stops planning and releases an owned binding."),
  sampling: SamplingSchema.optional()
    .transform((v) => v ?? SamplingSchema.parse({}))
    .describe("Sampling cadence and the wait for scale-up admission."),
  roles: z.array(RoleBoundsSchema).min(1).max(64).describe("Bounds for every target role."),
  ratios: z
    .array(RatioSchema)
    .max(64)
    .optional()
    .describe("Bands on numerator/denominator replica ratios between scaled roles."),
  algorithm: AlgorithmSchema.optional()
    .transform((v) => v ?? {})
    .describe("One algorithm type and only its parameter block."),
  behavior: BehaviorSchema.optional()
    .transform((v) => v ?? BehaviorSchema.parse({}))
    .describe("Pacing and guards."),
  rebalance: RebalanceSchema.optional()
    .transform((v) => v ?? RebalanceSchema.parse({}))
    .describe("Moving capacity between roles when a scale-up cannot be admitted."),
});

/** The spec as written by a user (before defaulting). */
export type ScalerSpecInput = z.input<typeof ScalerSpecSchema>;
/** The spec after parsing; `algorithm.type` is still optional until `defaultScalerSpec` infers it. */
export type ParsedScalerSpec = z.output<typeof ScalerSpecSchema>;
export type StepPolicy = z.output<typeof StepPolicySchema>;
export type RoleBounds = z.output<typeof RoleBoundsSchema>;
export type Ratio = z.output<typeof RatioSchema>;
export type ProportionalParams = z.output<typeof ProportionalSchema>;
export type TokenThroughputParams = z.output<typeof TokenThroughputSchema>;
export type PredictiveParams = z.output<typeof PredictiveSchema>;
export type AlgorithmType = (typeof algorithmTypes)[number];
export type ProportionalMetric = (typeof proportionalMetrics)[number];
export type Mode = (typeof modes)[number];
export type RebalancePolicy = (typeof rebalancePolicies)[number];

/** A defaulted spec: the algorithm type is known. */
export type ScalerSpec = Omit<ParsedScalerSpec, "algorithm"> & {
  readonly algorithm: ParsedScalerSpec["algorithm"] & { readonly type: AlgorithmType };
};

/** Infers the algorithm type from the parameter block (spec: Algorithms). */
export function inferAlgorithmType(algorithm: {
  type?: AlgorithmType | undefined;
  proportional?: unknown;
  predictive?: unknown;
}): AlgorithmType {
  if (algorithm.type !== undefined) return algorithm.type;
  if (algorithm.proportional !== undefined) return "Proportional";
  if (algorithm.predictive !== undefined) return "Predictive";
  return "TokenThroughput";
}

/** Applies the type inference on top of schema defaulting. */
export function withInferredAlgorithm(spec: ParsedScalerSpec): ScalerSpec {
  return { ...spec, algorithm: { ...spec.algorithm, type: inferAlgorithmType(spec.algorithm) } };
}

// ---------------------------------------------------------------- status

const timestamp = z.string().describe("RFC 3339 time.");
const replicaVector = z.record(z.string(), z.number().int().min(0)).describe("Replica counts by role.");

export const signalStates = ["Fresh", "Idle", "Missing", "Stale"] as const;
export const conditionTypes = ["Bound", "Active", "MetricsReady", "Blocked"] as const;
export const conditionStatuses = ["True", "False", "Unknown"] as const;

export const RoleStatusSchema = z.object({
  name: z.string().describe("Role name."),
  currentReplicas: z.number().int().min(0).describe("Desired count currently on the target."),
  readyReplicas: z.number().int().min(0).describe("Ready serving replicas used to calculate capacity."),
  signalState: z.enum(signalStates).describe("Fresh, Idle (observed, no work), Missing or Stale."),
  promptTokensPerSecond: z.string().optional().describe("Cache-missed prompt rate across sampled replicas."),
  generationTokensPerSecond: z.string().optional(),
  runningRequests: z.number().min(0).optional(),
  waitingRequests: z.number().min(0).optional(),
  kvCacheUsage: z.string().optional().describe("Mean reported cache fraction."),
  ttftMilliseconds: z.string().optional(),
  itlMilliseconds: z.string().optional(),
  queueTimeMilliseconds: z
    .string()
    .optional()
    .describe("p95 time requests waited in the engines' queues before they were scheduled, when exported."),
  latencyGuard: z
    .string()
    .optional()
    .describe(
      "How the latency guard read TTFT this pass: `queueing` (a breach counts only when waiting is a material part of it) or `literal`, and why; with a `queueTimeTargetMilliseconds`, the p95 queue time against it.",
    ),
  rawRecommendedReplicas: z.number().int().min(0).optional().describe("Algorithm result."),
  constrainedReplicas: z.number().int().min(0).optional().describe("Result after bounds, ratios, pacing and guards."),
  reason: z.string().optional().describe("Algorithm or constraint explanation."),
  lastScaleUpTime: timestamp.optional(),
  stabilizationHistory: z
    .array(z.object({ timestamp, replicas: z.number().int().min(0) }))
    .max(256)
    .optional()
    .describe("At most 256 recommendations."),
});

export const BindingStatusSchema = z.object({
  targetUID: z.string(),
  targetName: z.string(),
  term: z.number().int().min(1).optional(),
});

export const LastCommitSchema = z.object({
  decisionID: z.string(),
  term: z.number().int().min(1),
  vector: replicaVector,
  baselineVector: replicaVector,
  timestamp,
  targetGeneration: z.number().int().min(0),
});

export const PendingCohortSchema = z.object({
  decisionID: z.string(),
  term: z.number().int().min(1),
  baselineVector: replicaVector,
  targetVector: replicaVector,
  startedAt: timestamp,
});

export const rebalanceReasons = [
  "ResourceExhausted",
  "DonorRelease",
  "ReceiverAcquire",
  "DonationAttempted",
  "RebalanceNotApplicable",
  "RebalanceBlocked",
] as const;

export const RebalanceStatusSchema = z.object({
  receiverRole: z.string().optional(),
  donorRole: z.string().optional(),
  donorTargetReplicas: z.number().int().min(0).optional(),
  receiverTargetReplicas: z.number().int().min(0).optional(),
  startedAt: timestamp.optional(),
  exhaustionEpisodeGeneration: z.number().int().min(0).optional(),
  donationAttempted: z.boolean().optional(),
  reason: z.string().optional(),
});

export const LastScaleDownSchema = z.object({
  role: z.string(),
  ordinal: z.number().int().min(0),
  preScaleDownVector: replicaVector,
  outcome: z.enum(["Committed", "Aborted"]),
  abortedAt: timestamp.optional(),
  cooldownUntil: timestamp.optional(),
});

export const PredictorStatusSchema = z.object({
  name: z.string(),
  level: z.string().describe("Estimated demand in tokens per second."),
  trend: z.string().describe("Demand change per second."),
  covariance: z.object({ p00: z.string(), p01: z.string(), p10: z.string(), p11: z.string() }),
  sampleCount: z.number().int().min(0),
  lastUpdateTime: timestamp.optional().describe("Time of the last filter update; elapsed time enters the transition."),
  history: z
    .array(z.object({ timestamp, tokensPerSecond: z.string() }))
    .max(256)
    .optional(),
});

export const ConditionSchema = z.object({
  type: z.enum(conditionTypes),
  status: z.enum(conditionStatuses),
  reason: z.string(),
  message: z.string(),
  observedGeneration: z.number().int().min(0).optional(),
  lastTransitionTime: timestamp,
});

export const ScalerStatusSchema = z.object({
  observedGeneration: z.number().int().min(0).optional().describe("Scaler generation this report used."),
  binding: BindingStatusSchema.optional().describe("The target this scaler is bound to and the binding term."),
  roles: z.array(RoleStatusSchema).optional().describe("Observations and recommendations per role."),
  lastCommit: LastCommitSchema.optional().describe("The latest write to the target."),
  pendingCohort: PendingCohortSchema.optional().describe("A committed scale-up waiting for admission."),
  rebalance: RebalanceStatusSchema.optional().describe("The donor/receiver transaction in progress."),
  lastScaleDown: LastScaleDownSchema.optional().describe("The latest removal and its outcome."),
  predictors: z.array(PredictorStatusSchema).optional().describe("Demand history and filter state per role."),
  conditions: z.array(ConditionSchema).optional().describe("Bound, Active, MetricsReady and Blocked."),
  lastPassTime: timestamp
    .optional()
    .describe("Time of the latest planning pass; a longer pause is a gap that restarts the recommendation history."),
});

export type ScalerStatus = z.output<typeof ScalerStatusSchema>;
export type RoleStatus = z.output<typeof RoleStatusSchema>;
export type Condition = z.output<typeof ConditionSchema>;
export type ConditionType = (typeof conditionTypes)[number];
export type PredictorStatus = z.output<typeof PredictorStatusSchema>;
export type LastCommit = z.output<typeof LastCommitSchema>;
export type PendingCohort = z.output<typeof PendingCohortSchema>;
export type RebalanceStatus = z.output<typeof RebalanceStatusSchema>;
export type LastScaleDown = z.output<typeof LastScaleDownSchema>;
export type ReplicaVector = Record<string, number>;

export const ObjectMetaSchema = z.looseObject({
  name: objectName,
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().int().min(0).optional(),
  resourceVersion: z.string().optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
  deletionTimestamp: z.string().optional(),
});

export const ScalerSchema = z.looseObject({
  apiVersion: z.literal(apiVersion),
  kind: z.literal(scalerKind),
  metadata: ObjectMetaSchema,
  spec: ScalerSpecSchema,
  status: ScalerStatusSchema.optional(),
});

export type Scaler = z.output<typeof ScalerSchema>;
/** A defaulted scaler object: its spec has the algorithm type inferred. */
export type DefaultedScaler = Omit<Scaler, "spec"> & { readonly spec: ScalerSpec };
