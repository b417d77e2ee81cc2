/**
 * What each role kind serves and how much one replica of it can carry
 * (spec: Token throughput, Predictive). Encode roles serve no tokens of their
 * own: they follow a ratio.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { quantityValue } from "../api/quantity.js";
import type { PredictiveParams, TokenThroughputParams } from "../api/scaler.js";
import type { PodField } from "../signals/pod-fields.js";
import type { RoleObservation, WindowName } from "../signals/types.js";

/**
 * The token demand a role kind serves, over one window: Prefill the
 * cache-missed prompt rate, Decode the generation rate, Server both (each must
 * be present: half a Server's demand would understate it). Undefined when missing.
 */
export function roleDemandTokensPerSecond(
  kind: RoleKind,
  observation: Pick<
    RoleObservation,
    | "promptTokensPerSecond"
    | "generationTokensPerSecond"
    | "panicPromptTokensPerSecond"
    | "panicGenerationTokensPerSecond"
  >,
  window: WindowName,
): number | undefined {
  const prompt = window === "stable" ? observation.promptTokensPerSecond : observation.panicPromptTokensPerSecond;
  const generation =
    window === "stable" ? observation.generationTokensPerSecond : observation.panicGenerationTokensPerSecond;
  switch (kind) {
    case "Prefill":
      return prompt;
    case "Decode":
      return generation;
    case "Server":
      return prompt === undefined || generation === undefined ? undefined : prompt + generation;
    // Stryker disable next-line ConditionalExpression,StringLiteral: falling out of the switch also gives undefined
    case "Encode":
      return undefined;
  }
}

/**
 * The pod fields token-driven algorithms read for a role kind: the demand the
 * kind serves and the latency it is guarded on (TTFT for Prefill, ITL for
 * Decode, both for Server).
 */
export function tokenFieldsRead(kind: RoleKind): readonly PodField[] {
  switch (kind) {
    case "Prefill":
      return ["promptTokens", "ttft"];
    case "Decode":
      return ["generationTokens", "itl"];
    case "Server":
      return ["promptTokens", "generationTokens", "ttft", "itl"];
    case "Encode":
      return [];
  }
}

function optionalQuantity(text: string | undefined): number | undefined {
  return text === undefined ? undefined : quantityValue(text);
}

/** The TokenThroughput capacity of one replica of this kind, or undefined (Encode, or not configured). */
export function tokenTargetPerReplica(kind: RoleKind, params: TokenThroughputParams): number | undefined {
  switch (kind) {
    case "Prefill":
      return optionalQuantity(params.prefillTargetTokensPerSecond);
    case "Decode":
      return optionalQuantity(params.decodeTargetTokensPerSecond);
    case "Server":
      return optionalQuantity(params.serverTargetTokensPerSecond);
    // Stryker disable next-line ConditionalExpression,StringLiteral: falling out of the switch also gives undefined
    case "Encode":
      return undefined;
  }
}

/** The Predictive forecast capacity of one replica of this kind, or undefined. */
export function forecastCapacityPerReplica(kind: RoleKind, params: PredictiveParams): number | undefined {
  switch (kind) {
    case "Prefill":
      return optionalQuantity(params.prefillTokenCapacityPerReplica);
    case "Decode":
      return optionalQuantity(params.decodeTokenCapacityPerReplica);
    case "Server":
      return optionalQuantity(params.serverTokenCapacityPerReplica);
    // Stryker disable next-line ConditionalExpression,StringLiteral: falling out of the switch also gives undefined
    case "Encode":
      return undefined;
  }
}
