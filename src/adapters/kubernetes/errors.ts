/**
 * The one error family of every Kubernetes call the product makes (controller,
 * webhooks, CLI, simulated reconciler): the call it concerns, the HTTP status
 * when the API server answered, the server's own reason, and the original
 * error as `cause`.
 */
import { ApiException } from "@kubernetes/client-node";

/** An API call that failed; `statusCode` is the HTTP status when the server answered. */
export class KubeCallError extends Error {
  override readonly name: string = "KubeCallError";
  constructor(
    message: string,
    readonly statusCode: number | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** 409: the object changed since it was read (a resourceVersion guard or test operation failed); re-read and re-plan. */
export class ConflictError extends KubeCallError {
  override readonly name = "ConflictError";
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describeFailure(error: unknown): { message: string; statusCode: number | undefined } {
  if (error instanceof ApiException) {
    const body: unknown = typeof error.body === "string" ? safeJson(error.body) : error.body;
    const reason = (body as { message?: unknown } | undefined)?.message;
    return { message: `HTTP ${error.code}${typeof reason === "string" ? `: ${reason}` : ""}`, statusCode: error.code };
  }
  const statusCode = (error as { statusCode?: unknown } | undefined)?.statusCode;
  // fetch reports "fetch failed"; the socket's error code (ECONNREFUSED, ...) is one cause down.
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return {
    message: `${error instanceof Error ? error.message : String(error)}${typeof code === "string" ? ` (${code})` : ""}`,
    statusCode: typeof statusCode === "number" ? statusCode : undefined,
  };
}

/** Wraps a failure of the call named `what`; an error that is already one is returned as it is. */
export function wrapKubeError(what: string, error: unknown): KubeCallError {
  if (error instanceof KubeCallError) return error;
  const failure = describeFailure(error);
  const options = { cause: error };
  return failure.statusCode === 409
    ? new ConflictError(`${what}: the object changed since it was read (${failure.message})`, 409, options)
    : new KubeCallError(`${what}: ${failure.message}`, failure.statusCode, options);
}

/** Runs `call`, rethrowing any failure as a `KubeCallError` (a `ConflictError` on 409) naming `what`. */
export async function kubeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw wrapKubeError(what, error);
  }
}
