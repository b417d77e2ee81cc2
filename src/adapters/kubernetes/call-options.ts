/**
 * Per-call options for @kubernetes/client-node: an abort signal that bounds
 * the whole call (and, for writes under a leadership, ends it on step-down)
 * and, for patches, the request's content type.
 */
import { Observable, type ConfigurationOptions } from "@kubernetes/client-node";

export function callOptions(timeoutMs: number, contentType?: string, until?: AbortSignal): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          const timeout = AbortSignal.timeout(timeoutMs);
          context.setSignal(until === undefined ? timeout : AbortSignal.any([timeout, until]));
          if (contentType !== undefined) context.setHeaderParam("Content-Type", contentType);
          return new Observable(Promise.resolve(context));
        },
        post: (context) => new Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: "append",
  };
}
