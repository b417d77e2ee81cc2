/**
 * The fleet settings file `simulate --fleet` and `calibrate --trace` read: the replica preset,
 * routing, cold starts, roles and the rest (every field optional), checked field by field.
 */
import { z } from "zod";
import { routingRules } from "../sim/quality/cluster.js";
import { replicaPresetNames } from "../sim/quality/presets.js";
import type { runPolicy } from "../sim/quality/run.js";
import { exitCodes, type CliIo } from "./io.js";

const FleetSchema = z.strictObject({
  initialReplicas: z.number().int().min(1).max(1024).optional(),
  preset: z.enum(replicaPresetNames).optional(),
  gpusPerReplica: z.number().int().min(1).max(64).optional(),
  routing: z.enum(routingRules).optional(),
  roles: z
    .array(z.strictObject({ name: z.string().min(1), kind: z.enum(["Server", "Prefill", "Decode"]) }))
    .min(1)
    .optional(),
  kvLink: z
    .strictObject({ bytesPerToken: z.number().positive(), linkBytesPerSecond: z.number().positive() })
    .optional(),
  quotaReplicas: z.number().int().min(1).max(1024).optional(),
  coldStartSeconds: z
    .strictObject({ min: z.number().min(0), max: z.number().min(0) })
    .refine((c) => c.max >= c.min, "max must be at least min")
    .optional(),
  capacity: z
    .strictObject({
      prefillTokensPerSecond: z.number().positive().optional(),
      decodeTokensPerSecond: z.number().positive().optional(),
      maxTokensPerSecondPerRequest: z.number().positive().optional(),
      maxRunningRequests: z.number().int().positive().optional(),
      kvCacheTokens: z.number().int().positive().optional(),
      prefixCacheBlocks: z.number().int().min(0).optional(),
    })
    .optional(),
});
export type FleetFile = z.infer<typeof FleetSchema>;

/** The fleet file's settings (none without `--fleet`), or exit 1 after naming each bad field. */
export function readFleet(
  io: CliIo,
  path: string | undefined,
  /** The command's own YAML reader: one document, errors naming the file. */
  readYaml: (path: string) => unknown,
): FleetFile | number {
  if (path === undefined) return {};
  const f = FleetSchema.safeParse(readYaml(path));
  if (f.success) return f.data;
  for (const issue of f.error.issues) io.stderr(`${path}: ${issue.path.join(".") || "(document)"}: ${issue.message}\n`);
  return exitCodes.invalid;
}

/** The simulated fleet's options: only the settings the fleet file gives. */
export function fleetOptions(fleet: FleetFile): NonNullable<NonNullable<Parameters<typeof runPolicy>[2]>["fleet"]> {
  return {
    ...(fleet.preset === undefined ? {} : { preset: fleet.preset }),
    ...(fleet.gpusPerReplica === undefined ? {} : { gpusPerReplica: fleet.gpusPerReplica }),
    ...(fleet.routing === undefined ? {} : { routing: fleet.routing }),
    ...(fleet.capacity === undefined
      ? {}
      : { capacity: Object.fromEntries(Object.entries(fleet.capacity).filter(([, v]) => v !== undefined)) }),
    ...(fleet.coldStartSeconds === undefined ? {} : { coldStartSeconds: fleet.coldStartSeconds }),
    ...(fleet.quotaReplicas === undefined ? {} : { quotaReplicas: fleet.quotaReplicas }),
    ...(fleet.roles === undefined ? {} : { roles: fleet.roles }),
    ...(fleet.kvLink === undefined ? {} : { kvLink: fleet.kvLink }),
  };
}
