/**
 * Replica presets: one serving replica of a named model on named hardware,
 * with the capacities the load model needs, the GPUs the replica holds (what
 * GPU-hours count) and the KV bytes per token (what a prefill/decode handoff
 * moves). docs/quality.md ("Replica presets") gives each figure's source.
 */
import { defaultCapacity, type EngineCapacity } from "../engines/model.js";

export interface ReplicaPreset {
  /** Model and hardware in a few words, for summaries. */
  readonly describes: string;
  readonly gpusPerReplica: number;
  readonly capacity: EngineCapacity;
  /** KV cache bytes per token in bf16: layers × KV heads × head dimensions × K and V × 2 bytes. */
  readonly kvBytesPerToken: number;
}

export const replicaPresetNames = ["llama-3.1-70b-4xh100", "llama-3.1-8b-1xh100"] as const;
export type ReplicaPresetName = (typeof replicaPresetNames)[number];

export const replicaPresets: Readonly<Record<ReplicaPresetName, ReplicaPreset>> = {
  // The capacities every earlier result was measured with. Prefill matches TP4 at about 29 % of
  // the GPUs' dense BF16 peak; decode (1500 tokens/s) and KV (200k tokens) are below what four
  // H100s hold and serve, so this preset is decode- and KV-poor: a conservative 70B replica.
  "llama-3.1-70b-4xh100": {
    describes: "Llama-3.1-70B (bf16) on 4 × H100 80GB, tensor parallel 4",
    gpusPerReplica: 4,
    capacity: defaultCapacity,
    // 80 layers × 8 KV heads × 128 dims × 2 × 2 bytes = 320 KiB.
    kvBytesPerToken: 327_680,
  },
  "llama-3.1-8b-1xh100": {
    describes: "Llama-3.1-8B (bf16) on 1 × H100 80GB",
    gpusPerReplica: 1,
    capacity: {
      prefillTokensPerSecond: 30_000,
      decodeTokensPerSecond: 12_000,
      maxTokensPerSecondPerRequest: 200,
      maxRunningRequests: 256,
      kvCacheTokens: 400_000,
      prefixCacheBlocks: 4096,
      acceptedTokensPerStep: 1,
    },
    // 32 layers × 8 KV heads × 128 dims × 2 × 2 bytes = 128 KiB.
    kvBytesPerToken: 131_072,
  },
};

/** The preset a fleet uses when none is named: the one every earlier result was measured with. */
export const defaultPresetName: ReplicaPresetName = "llama-3.1-70b-4xh100";

/** The named preset, or an error naming the field and the value. */
export function replicaPreset(name: string): ReplicaPreset {
  if (!(replicaPresetNames as readonly string[]).includes(name))
    throw new Error(`fleet.preset: one of ${replicaPresetNames.join(", ")}, got ${JSON.stringify(name)}`);
  return replicaPresets[name as ReplicaPresetName];
}
