/** A real control plane with the scaler's and the ModelDeployment's CRDs applied: the set-up of every test that runs the controller against an API server. */
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { loadModelDeploymentCrd, loadScalerCrd } from "./crds.js";

export async function startControlPlaneWithCrds(): Promise<ControlPlane> {
  const controlPlane = await startControlPlane();
  try {
    await controlPlane.applyCrd(await loadScalerCrd());
    await controlPlane.applyCrd(await loadModelDeploymentCrd());
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
  return controlPlane;
}
