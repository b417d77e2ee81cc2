/**
 * The fields of a ModelDeployment (owned by the gpustack operator) that the
 * scaler reads. Every object is loose: unknown fields pass through untouched,
 * because the scaler writes back only replica counts and two annotations.
 */
import { z } from "zod";
import { ObjectMetaSchema } from "./scaler.js";

export const modelDeploymentKind = "ModelDeployment";
export const roleKinds = ["Server", "Prefill", "Decode", "Encode"] as const;
export type RoleKind = (typeof roleKinds)[number];

export const TargetRoleSchema = z.looseObject({
  name: z.string().min(1),
  kind: z
    .enum(roleKinds)
    .optional()
    .transform((v) => v ?? "Server"),
  replicas: z.number().int().min(0),
  instanceType: z.string().optional(),
  /** Pods per replica (the operator's default is 1); names the members of a replica group. */
  size: z.number().int().min(1).optional(),
  command: z.unknown().optional(),
  elasticEp: z.unknown().optional(),
});

export const TargetRoleStatusSchema = z.looseObject({
  name: z.string(),
  desired: z.number().int().min(0).optional(),
  ready: z.number().int().min(0).optional(),
  /** Replicas of the role holding admission; an added replica is pending until it does. */
  quotaReserved: z.number().int().min(0).optional(),
});

export const retirementStates = [
  "Admitted",
  "Disqualified",
  "Withdrawing",
  "Draining",
  "Deleting",
  "Settling",
  "Aborted",
  "Completed",
] as const;

export const RetirementSchema = z.looseObject({
  roleName: z.string(),
  replicaOrdinal: z.number().int().min(0),
  /** `Aborted` is terminal and keeps the replica; `Completed` means the workload is gone. */
  state: z.string(),
});

export const ModelDeploymentSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.literal(modelDeploymentKind),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ roles: z.array(TargetRoleSchema) }),
  status: z
    .looseObject({
      roles: z.array(TargetRoleStatusSchema).optional(),
      retirement: RetirementSchema.nullish(),
    })
    .optional(),
});

export type ModelDeployment = z.output<typeof ModelDeploymentSchema>;
export type TargetRole = z.output<typeof TargetRoleSchema>;
export type TargetRoleStatus = z.output<typeof TargetRoleStatusSchema>;
export type Retirement = z.output<typeof RetirementSchema>;

/** Annotation keys of the binding fence (spec: Binding fence). */
export const bindingAnnotation = "modeldeployment.gpustack.ai/scaler-binding";
export const decisionAnnotation = "modeldeployment.gpustack.ai/scaler-decision";
/**
 * Set with the binding annotation and removed with it, so the fence webhook's
 * objectSelector sends only bound targets (and writes that unbind one) to the
 * scaler: an outage of the scaler blocks nothing unbound (docs/webhooks.md).
 */
export const boundLabel = "modeldeployment.gpustack.ai/scaler-bound";
export const boundLabelValue = "true";

export const BindingPayloadSchema = z.strictObject({
  scalerName: z.string().min(1),
  scalerUID: z.string().min(1),
  term: z.number().int().min(1),
});

/**
 * Which controller replica's leadership wrote a decision: the Lease holder and
 * the Lease's transition count when it took the Lease. Transitions only grow,
 * so the fence can refuse a commit from a leadership older than the stored one.
 */
export const LeaderTokenSchema = z.strictObject({
  holder: z.string().min(1),
  transitions: z.number().int().min(0),
});

/** Why a commit was written (`CommitReason` of the planner), carried so a lost status can be rebuilt. */
export const commitReasons = [
  "Scale",
  "ResourceExhausted",
  "ScaleDownAborted",
  "DonorRelease",
  "ReceiverAcquire",
] as const;

export const DecisionPayloadSchema = z.strictObject({
  decisionID: z.string().min(1),
  term: z.number().int().min(1),
  vector: z.record(z.string(), z.number().int().min(0)),
  /** Absent on decisions written without leader election, or before tokens existed: the oldest token. */
  leader: LeaderTokenSchema.optional(),
  // The commit record, optional for decisions written before it existed: with it a new leader
  // rebuilds `lastCommit`, `pendingCohort` and `lastScaleDown` that a lost status write never stored.
  baselineVector: z.record(z.string(), z.number().int().min(0)).optional(),
  timestamp: z.string().optional(),
  targetGeneration: z.number().int().min(0).optional(),
  reason: z.enum(commitReasons).optional(),
});

export type BindingPayload = z.output<typeof BindingPayloadSchema>;
export type DecisionPayload = z.output<typeof DecisionPayloadSchema>;
export type LeaderToken = z.output<typeof LeaderTokenSchema>;
