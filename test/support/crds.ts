/** CRDs from test/fixtures/crds, typed for `ControlPlane.applyCrd`. */
import { readFile } from "node:fs/promises";
import { loadYaml, type V1CustomResourceDefinition } from "@kubernetes/client-node";

const crdDirectory = new URL("../fixtures/crds/", import.meta.url);

/**
 * Reads one CRD manifest by file name from test/fixtures/crds. The manifest
 * goes through the client's own deserializer: its typed models spell
 * `x-kubernetes-*` keys differently, and a plain parsed object would lose
 * them on the way to the API server.
 */
export async function loadCrd(fileName: string): Promise<V1CustomResourceDefinition> {
  const url = new URL(fileName, crdDirectory);
  let crd: V1CustomResourceDefinition;
  try {
    crd = loadYaml<V1CustomResourceDefinition>(await readFile(url, "utf8"));
  } catch (error) {
    throw new Error(`read CRD ${url.pathname}`, { cause: error });
  }
  if (crd.kind !== "CustomResourceDefinition")
    throw new Error(`${url.pathname} is not a CustomResourceDefinition (kind ${String(crd.kind)})`);
  return crd;
}

/** The test copy of the gpustack operator's ModelDeployment CRD (worker.gpustack.ai/v1). */
export function loadModelDeploymentCrd(): Promise<V1CustomResourceDefinition> {
  return loadCrd("modeldeployments.worker.gpustack.ai.yaml");
}
