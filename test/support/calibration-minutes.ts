import type { CalibrationMinute } from "../../src/core/calibrate/minute.js";

/** Calibration minutes a minute apart from `startSeconds`, each minute's demand split over `ready` replicas. */
export function calibrationMinutes(demands: readonly number[], startSeconds = 60, ready = 2): CalibrationMinute[] {
  return demands.map((d, i) => ({
    endSeconds: startSeconds + 60 * i,
    readyReplicas: ready,
    tokensPerSecondPerReplica: d / ready,
  }));
}
