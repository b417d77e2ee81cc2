/**
 * Per-call options for @kubernetes/client-node: an abort signal that bounds
 * the whole call and, for patches, the request's content type.
 */
import { Observable, type ConfigurationOptions } from "@kubernetes/client-node";

export function callOptions(timeoutMs: number, contentType?: string): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(AbortSignal.timeout(timeoutMs));
          if (contentType !== undefined) context.setHeaderParam("Content-Type", contentType);
          return new Observable(Promise.resolve(context));
        },
        post: (context) => new Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: "append",
  };
}
