/**
 * A tolerant reading of a spec for the cross-field rules. It keeps every leaf
 * the schema would accept and drops the rest (the schema rule reports those),
 * so the cross-field rules run even when the schema refuses the object and
 * admission can return every problem at once.
 */
import {
  algorithmTypes,
  DnsLabelSchema,
  inferAlgorithmType,
  ReplicaBoundSchema,
  type AlgorithmType,
} from "../scaler.js";
import { parseQuantityExact } from "../quantity.js";
import type { Rational } from "../rational.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) && Object.hasOwn(value, key) ? value[key] : undefined;
}

function list(value: unknown): readonly unknown[] {
  // Stryker disable next-line ArrayDeclaration: a stray entry has no field, and every rule skips such an entry
  return Array.isArray(value) ? value : [];
}

function roleName(value: unknown): string | undefined {
  const parsed = DnsLabelSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function replicaCount(value: unknown): number | undefined {
  const parsed = ReplicaBoundSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** A positive quantity with its text, or undefined when absent or refused. */
export interface QuantityView {
  readonly raw: string | number;
  readonly value: Rational;
}

function positiveQuantity(value: unknown): QuantityView | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const exact = parseQuantityExact(value);
  return exact !== undefined && exact.num > 0n ? { raw: value, value: exact } : undefined;
}

export interface RoleView {
  readonly index: number;
  readonly name: string | undefined;
  /** Defaults to 1 when omitted. */
  readonly minReplicas: number | undefined;
  readonly maxReplicas: number | undefined;
  /** `floorReplicasByUtcHour` as written, each entry a count or undefined where the schema refuses it. */
  readonly floorByUtcHour: readonly (number | undefined)[];
}

export interface RatioView {
  readonly index: number;
  readonly numeratorRole: string | undefined;
  readonly denominatorRole: string | undefined;
  readonly target: QuantityView | undefined;
  readonly min: QuantityView | undefined;
  readonly max: QuantityView | undefined;
}

export interface NamedEntry {
  readonly index: number;
  readonly name: string | undefined;
}

/** The three algorithm parameter blocks, by their key under `algorithm`. */
export const parameterBlocks = {
  Proportional: "proportional",
  TokenThroughput: "tokenThroughput",
  Predictive: "predictive",
} as const;
export type ParameterBlock = (typeof parameterBlocks)[AlgorithmType];

export interface AlgorithmView {
  /** The type as written, when it is a known type. */
  readonly declaredType: AlgorithmType | undefined;
  /** The type the spec runs: declared, else inferred from the blocks. */
  readonly type: AlgorithmType;
  /** Parameter blocks present, whatever their content. */
  readonly blocks: ReadonlySet<ParameterBlock>;
  /** The blocks as written. */
  readonly blockValues: Readonly<Partial<Record<ParameterBlock, unknown>>>;
  readonly roleTargets: readonly NamedEntry[];
  /** Raw parameter objects (undefined when absent). */
  readonly tokenThroughput: unknown;
  readonly predictive: unknown;
}

export interface SpecView {
  readonly targetRefName: string | undefined;
  readonly roles: readonly RoleView[];
  readonly ratios: readonly RatioView[];
  readonly algorithm: AlgorithmView;
  readonly priority: readonly NamedEntry[];
}

function readAlgorithm(raw: unknown): AlgorithmView {
  const declared = field(raw, "type");
  const declaredType = algorithmTypes.find((t) => t === declared);
  const blocks = new Set<ParameterBlock>();
  const blockValues: Partial<Record<ParameterBlock, unknown>> = {};
  for (const block of Object.values(parameterBlocks)) {
    const value = field(raw, block);
    if (value === undefined) continue;
    blocks.add(block);
    blockValues[block] = value;
  }
  const type = inferAlgorithmType({
    type: declaredType,
    proportional: field(raw, "proportional"),
    predictive: field(raw, "predictive"),
  });
  const roleTargets = list(field(field(raw, "proportional"), "roleTargets")).map((entry, index) => ({
    index,
    name: roleName(field(entry, "name")),
  }));
  return {
    declaredType,
    type,
    blocks,
    blockValues,
    roleTargets,
    tokenThroughput: field(raw, "tokenThroughput"),
    predictive: field(raw, "predictive"),
  };
}

/** Reads `spec` (any JSON) into the view the cross-field rules use. */
export function readSpecView(spec: unknown): SpecView {
  const roles = list(field(spec, "roles")).map((entry, index) => {
    const min = field(entry, "minReplicas");
    return {
      index,
      name: roleName(field(entry, "name")),
      minReplicas: min === undefined ? 1 : replicaCount(min),
      maxReplicas: replicaCount(field(entry, "maxReplicas")),
      floorByUtcHour: list(field(entry, "floorReplicasByUtcHour")).map(replicaCount),
    };
  });
  const ratios = list(field(spec, "ratios")).map((entry, index) => ({
    index,
    numeratorRole: roleName(field(entry, "numeratorRole")),
    denominatorRole: roleName(field(entry, "denominatorRole")),
    target: positiveQuantity(field(entry, "target")),
    min: positiveQuantity(field(entry, "min")),
    max: positiveQuantity(field(entry, "max")),
  }));
  const name = field(field(spec, "targetRef"), "name");
  return {
    targetRefName: typeof name === "string" ? name : undefined,
    roles,
    ratios,
    algorithm: readAlgorithm(field(spec, "algorithm")),
    priority: list(field(field(spec, "rebalance"), "priority")).map((entry, index) => ({
      index,
      name: roleName(entry),
    })),
  };
}

/** Whether a capacity field is written (its syntax is the schema rule's business). */
export function hasField(value: unknown, key: string): boolean {
  return field(value, key) !== undefined;
}

/** Reads one key of an object, tolerating anything. */
export function readField(value: unknown, key: string): unknown {
  return field(value, key);
}

/** Names of the scaled roles (those with bounds). */
export function scaledRoleNames(view: SpecView): ReadonlySet<string> {
  return new Set(view.roles.map((r) => r.name).filter((name) => name !== undefined));
}
