/**
 * The store builder: the Kubernetes adapter every write goes through (each asking the Lease first)
 * and the watch caches passes read. Its stop ends the informers, which would otherwise keep the
 * process alive after a failed start.
 */
import { KubeResources, modelDeploymentResource } from "../../adapters/kubernetes/resources.js";
import { WatchedResources } from "../../adapters/kubernetes/watch.js";
import type { StartContext } from "./context.js";
import type { Leadership } from "./leadership.js";

export async function buildStore(ctx: StartContext, leadership: Leadership): Promise<WatchedResources> {
  const { config } = ctx;
  const elector = leadership.elector;
  const resources = new KubeResources(ctx.kubeConfig, {
    timeoutMs: config.kubeTimeoutMs,
    // Every write asks the Lease first, right before it is sent, and is aborted on step-down.
    ...(elector === undefined ? {} : { writeGuard: () => elector.writePermit() }),
    targetResource: modelDeploymentResource(config.targetApiVersion),
  });
  // Passes read watch caches; commits and conflict re-reads go to the API server.
  const store = new WatchedResources({ resources, namespace: config.watchNamespace, logger: ctx.logger });
  // Registered before the start: a start that fails halfway has informers to stop too.
  ctx.lifecycle.onStop("watch store", () => store.stop());
  await store.start();
  return store;
}
