import { ApiException } from "@kubernetes/client-node";

/** The HTTP code and Status message of a call the API server rejected; throws when it was accepted. */
export async function rejection(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = typeof error.body === "string" ? JSON.parse(error.body) : error.body;
    const message = (body as { message?: unknown } | undefined)?.message;
    return { code: error.code, message: typeof message === "string" ? message : JSON.stringify(body) };
  }
  throw new Error("expected the API server to reject the call");
}
