/** Every dashboard the project ships, by file name under dashboards/. */
import type { Dashboard } from "@grafana/grafana-foundation-sdk/dashboard";
import { controllerDashboard } from "./controller.js";
import { enginesDashboard } from "./engines.js";
import { fleetDashboard } from "./fleet.js";
import { buildDashboard } from "./panels.js";
import { scalersDashboard } from "./scalers.js";

export const dashboards: Readonly<Record<string, () => Dashboard>> = {
  "mds-scaler-fleet.json": () => buildDashboard(fleetDashboard),
  "mds-scaler.json": () => buildDashboard(scalersDashboard),
  "mds-scaler-engines.json": () => buildDashboard(enginesDashboard),
  "mds-scaler-controller.json": () => buildDashboard(controllerDashboard),
};
