/**
 * Defaulting: parse with the schema (which stores every default), infer the
 * algorithm type, and fill the chosen TokenThroughput or Predictive block with
 * its defaults when it was omitted. Pure and idempotent: defaulting a
 * defaulted object returns an equal object.
 */
import { schemaProblems } from "./rules/schema.js";
import type { Problem } from "./problem.js";
import {
  PredictiveSchema,
  ScalerSchema,
  ScalerSpecSchema,
  TokenThroughputSchema,
  withInferredAlgorithm,
  type DefaultedScaler,
  type ParsedScalerSpec,
  type ScalerSpec,
} from "./scaler.js";

export type Defaulted<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problems: Problem[] };

/** Infers the type and gives the chosen all-optional parameter block its defaults. */
export function completeSpec(parsed: ParsedScalerSpec): ScalerSpec {
  const spec = withInferredAlgorithm(parsed);
  const algorithm = spec.algorithm;
  if (algorithm.type === "TokenThroughput" && algorithm.tokenThroughput === undefined) {
    return { ...spec, algorithm: { ...algorithm, tokenThroughput: TokenThroughputSchema.parse({}) } };
  }
  if (algorithm.type === "Predictive" && algorithm.predictive === undefined) {
    return { ...spec, algorithm: { ...algorithm, predictive: PredictiveSchema.parse({}) } };
  }
  return spec;
}

/** Defaults a spec; problems carry paths under `spec`. */
export function defaultScalerSpec(input: unknown): Defaulted<ScalerSpec> {
  const parsed = ScalerSpecSchema.safeParse(input);
  if (!parsed.success) return { ok: false, problems: schemaProblems(parsed.error.issues, input, ["spec"]) };
  return { ok: true, value: completeSpec(parsed.data) };
}

/** Defaults a whole ModelDeploymentScaler object (apiVersion, kind, metadata, spec, status). */
export function defaultScaler(input: unknown): Defaulted<DefaultedScaler> {
  const parsed = ScalerSchema.safeParse(input);
  if (!parsed.success) return { ok: false, problems: schemaProblems(parsed.error.issues, input) };
  return { ok: true, value: { ...parsed.data, spec: completeSpec(parsed.data.spec) } };
}
