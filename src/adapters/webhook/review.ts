/**
 * The admission.k8s.io/v1 AdmissionReview envelope: decoding a request body
 * and encoding an answer. Pure functions, so the server can answer anything
 * it receives (valid, malformed or hostile) with a well-formed review.
 */
import { z } from "zod";
import type { JsonPatchOp } from "../../core/binding/patch.js";

export const admissionApiVersion = "admission.k8s.io/v1";

const GroupVersionKindSchema = z.looseObject({ group: z.string(), version: z.string(), kind: z.string() });
const GroupVersionResourceSchema = z.looseObject({ group: z.string(), version: z.string(), resource: z.string() });

const AdmissionRequestSchema = z.looseObject({
  uid: z.string().min(1),
  kind: GroupVersionKindSchema,
  resource: GroupVersionResourceSchema,
  subResource: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  operation: z.enum(["CREATE", "UPDATE", "DELETE", "CONNECT"]),
  userInfo: z.looseObject({ username: z.string().optional(), groups: z.array(z.string()).optional() }),
  object: z.unknown().optional(),
  oldObject: z.unknown().optional(),
  dryRun: z.boolean().optional(),
});

const AdmissionReviewSchema = z.looseObject({
  apiVersion: z.literal(admissionApiVersion),
  kind: z.literal("AdmissionReview"),
  request: AdmissionRequestSchema,
});

export type AdmissionRequest = z.output<typeof AdmissionRequestSchema>;

export type DecodedReview =
  | { readonly ok: true; readonly request: AdmissionRequest }
  | { readonly ok: false; readonly uid: string; readonly reason: string };

/** The request's uid when one can be found, so even a refusal of a malformed review names it. */
function uidOf(raw: unknown): string {
  const request = typeof raw === "object" && raw !== null ? (raw as { request?: unknown }).request : undefined;
  const uid = typeof request === "object" && request !== null ? (request as { uid?: unknown }).uid : undefined;
  return typeof uid === "string" ? uid : "";
}

/** Parses a request body; never throws. */
export function decodeReview(body: string): DecodedReview {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (error) {
    return {
      ok: false,
      uid: "",
      reason: `the body is not JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  const parsed = AdmissionReviewSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "<root>"}: ${i.message}`);
    return {
      ok: false,
      uid: uidOf(raw),
      reason: `not an ${admissionApiVersion} AdmissionReview request (${issues.join("; ")})`,
    };
  }
  return { ok: true, request: parsed.data.request };
}

/** What a handler decides; the server encodes it. */
export interface Verdict {
  readonly allowed: boolean;
  /** HTTP-style code of a refusal: 403 fence, 422 invalid object, 400 malformed review, 500 internal error. */
  readonly code?: number;
  readonly reason?: "Forbidden" | "Invalid" | "BadRequest" | "InternalError";
  readonly message?: string;
  readonly patch?: readonly JsonPatchOp[];
  readonly warnings?: readonly string[];
}

export function allowed(extra: Pick<Verdict, "patch" | "warnings"> = {}): Verdict {
  return { allowed: true, ...extra };
}

export function denied(code: 400 | 403 | 422 | 500, message: string, warnings?: readonly string[]): Verdict {
  const reason = code === 403 ? "Forbidden" : code === 422 ? "Invalid" : code === 400 ? "BadRequest" : "InternalError";
  return {
    allowed: false,
    code,
    reason,
    message,
    ...(warnings === undefined || warnings.length === 0 ? {} : { warnings }),
  };
}

/** Kubernetes shows at most this much of a warning; longer ones are cut here, not by the API server. */
const warningMaxChars = 256;
/** Keep refusals readable in a terminal and well under any size limit. */
const messageMaxChars = 16_384;

export interface ReviewResponseBody {
  readonly apiVersion: typeof admissionApiVersion;
  readonly kind: "AdmissionReview";
  readonly response: {
    readonly uid: string;
    readonly allowed: boolean;
    readonly status?: { readonly code: number; readonly reason: string; readonly message: string };
    readonly patchType?: "JSONPatch";
    readonly patch?: string;
    readonly warnings?: readonly string[];
  };
}

/** Encodes a verdict as the AdmissionReview the API server expects (uid echoed). */
export function encodeReview(uid: string, verdict: Verdict): ReviewResponseBody {
  const message =
    verdict.message === undefined
      ? undefined
      : verdict.message.length > messageMaxChars
        ? `${verdict.message.slice(0, messageMaxChars - 3)}...`
        : verdict.message;
  const patch =
    verdict.allowed && verdict.patch !== undefined && verdict.patch.length > 0
      ? Buffer.from(JSON.stringify(verdict.patch)).toString("base64")
      : undefined;
  return {
    apiVersion: admissionApiVersion,
    kind: "AdmissionReview",
    response: {
      uid,
      allowed: verdict.allowed,
      ...(verdict.allowed
        ? {}
        : {
            status: { code: verdict.code ?? 403, reason: verdict.reason ?? "Forbidden", message: message ?? "refused" },
          }),
      ...(patch === undefined ? {} : { patchType: "JSONPatch" as const, patch }),
      ...(verdict.warnings === undefined || verdict.warnings.length === 0
        ? {}
        : {
            warnings: verdict.warnings.map((w) =>
              w.length > warningMaxChars ? `${w.slice(0, warningMaxChars - 3)}...` : w,
            ),
          }),
    },
  };
}
