/**
 * The admission server under a flood of maximum-size reviews, as its own
 * process with a V8 heap limit: the real controller (test/support/replica-process.ts)
 * against a real API server, its webhook server called directly over HTTPS
 * (the API server sends at most 3 MiB objects; anything in the cluster can
 * send more). Every review is answered with a review or refused at once with
 * 429, the process survives its heap limit, its resident memory stays bounded,
 * and reviews keep being answered after the flood.
 */
import { startControlPlaneWithCrds } from "../support/control-plane.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCertificate } from "../../src/adapters/webhook/certificates.js";
import { webhookPaths } from "../../src/adapters/webhook/handlers.js";
import { defaultBodyLimitBytes } from "../../src/adapters/webhook/server.js";
import type { ControlPlane } from "../../harness/kube/index.js";
import { freeLoopbackPort } from "../../harness/kube/net.js";
import { controllerKubeConfig, releaseNamespace } from "../../harness/product-webhooks.js";

const root = join(import.meta.dirname, "..", "..");
const heapLimitMiB = 160;
/** Resident memory the process may reach: the heap limit plus Buffers, code and TLS (measured ~300 MiB). */
const rssLimitMiB = 480;
const maxConcurrent = 4;
const maxQueued = 16;
const parallel = 40;
const rounds = 3;

let controlPlane: ControlPlane;
let workDir: string;
let child: ChildProcess;
let output = "";
let webhookPort: number;
let agent: Agent;
const tls = generateCertificate(["127.0.0.1", "localhost"], Date.now());

beforeAll(async () => {
  controlPlane = await startControlPlaneWithCrds();
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of [releaseNamespace, "team"]) await core.createNamespace({ body: { metadata: { name } } });
  workDir = await mkdtemp(join(tmpdir(), "mds-webhook-load-"));
  const kubeconfigPath = join(workDir, "controller.kubeconfig");
  await writeFile(kubeconfigPath, (await controllerKubeConfig(controlPlane)).exportConfig(), { mode: 0o600 });
  await writeFile(join(workDir, "tls.crt"), tls.certPem);
  await writeFile(join(workDir, "tls.key"), tls.keyPem, { mode: 0o600 });
  webhookPort = await freeLoopbackPort();
  child = spawn(
    process.execPath,
    [
      `--max-old-space-size=${heapLimitMiB}`,
      "--import",
      "tsx",
      join(root, "test", "support", "replica-process.ts"),
      "--prometheus-url=http://127.0.0.1:9",
      `--kubeconfig=${kubeconfigPath}`,
      "--metrics-address=127.0.0.1:0",
      `--webhook-address=127.0.0.1:${webhookPort}`,
      `--webhook-cert-dir=${workDir}`,
      `--webhook-max-concurrent=${maxConcurrent}`,
      `--webhook-max-queued=${maxQueued}`,
      "--log-level=warn",
    ],
    {
      cwd: root,
      env: { ...process.env, MDS_POD_NAME: "load", MDS_POD_NAMESPACE: releaseNamespace },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const append = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stderr?.on("data", append);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      append(chunk);
      if (output.includes('"webhookPort"')) resolve();
    });
    child.once("exit", (code, signal) => reject(new Error(`the replica exited (${code ?? signal}):\n${output}`)));
  });
  agent = new Agent({ keepAlive: false, ca: tls.caPem });
}, 180_000);

afterAll(async () => {
  agent?.destroy();
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await controlPlane?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

/** Everything of a review after its uid, so one large tail serves every request. */
function reviewTail(kind: "ModelDeployment" | "ModelDeploymentScaler", filler: "string" | "values"): Buffer {
  const resource = kind === "ModelDeployment" ? "modeldeployments" : "modeldeploymentscalers";
  // Two objects of ~3.4 MiB each: the API server's 3 MiB object limit, twice, plus escaping.
  const each = Math.floor((defaultBodyLimitBytes - 4096) / 2);
  const object = (): unknown => {
    const metadata: Record<string, unknown> = { name: "big", namespace: "team", uid: "u-1" };
    const spec: Record<string, unknown> =
      kind === "ModelDeployment"
        ? { roles: [{ name: "server", kind: "Server", replicas: 2 }] }
        : { targetRef: { name: "big" }, roles: [{ name: "server", maxReplicas: 4 }] };
    if (filler === "string") metadata["annotations"] = { "example.com/notes": "x".repeat(each - 400) };
    else spec["extra"] = Array.from({ length: Math.floor((each - 400) / 2) }, () => 0);
    return { apiVersion: "worker.gpustack.ai/v1", kind, metadata, spec };
  };
  const one = JSON.stringify(object());
  const rest =
    `kind":{"group":"worker.gpustack.ai","version":"v1","kind":"${kind}"},` +
    `"resource":{"group":"worker.gpustack.ai","version":"v1","resource":"${resource}"},` +
    `"namespace":"team","name":"big","operation":"UPDATE","userInfo":{"username":"alice"},` +
    `"object":${one},"oldObject":${one}}}`;
  return Buffer.from(rest);
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

function post(path: string, uid: string, tail: Buffer): Promise<Answer> {
  const head = Buffer.from(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}","`);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: webhookPort,
        path,
        method: "POST",
        agent,
        servername: "localhost",
        headers: { "content-type": "application/json", "content-length": head.length + tail.length },
        timeout: 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer for ${uid} within 60 s`)));
    req.on("error", reject);
    req.write(head);
    req.end(tail);
  });
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0");
  return kib / 1024;
}

describe("admission under load", () => {
  it("answers or refuses every maximum-size review at once, within its heap limit and bounded memory", async () => {
    const tails = [
      { path: webhookPaths.validateTarget, tail: reviewTail("ModelDeployment", "string") },
      { path: webhookPaths.validateScaler, tail: reviewTail("ModelDeploymentScaler", "string") },
      { path: webhookPaths.mutateScaler, tail: reviewTail("ModelDeploymentScaler", "values") },
    ];
    for (const { tail } of tails) expect(tail.length).toBeGreaterThan(6.5 * 1024 * 1024);
    const pid = child.pid ?? 0;
    let peakRss = await rssMiB(pid);
    const baselineRss = peakRss;
    const sampler = setInterval(() => {
      void rssMiB(pid).then(
        (mib) => (peakRss = Math.max(peakRss, mib)),
        () => undefined,
      );
    }, 50);
    const counts = { reviewed: 0, allowed: 0, valueCap: 0, shed: 0 };
    try {
      for (let round = 0; round < rounds; round++) {
        const answers = await Promise.all(
          Array.from({ length: parallel }, (_, i) => {
            const { path, tail } = tails[i % tails.length] ?? tails[0]!;
            const uid = `r${round}-${String(i).padStart(3, "0")}`;
            return post(path, uid, tail).then((answer) => ({ uid, path, answer }));
          }),
        );
        let reviewedThisRound = 0;
        for (const { uid, path, answer } of answers) {
          if (answer.status === 429) {
            expect(answer.body).toContain("mds-scaler admission is at its limit");
            counts.shed += 1;
            continue;
          }
          expect(answer.status, answer.body.slice(0, 300)).toBe(200);
          const review = JSON.parse(answer.body) as {
            response: { uid: string; allowed: boolean; status?: { message: string } };
          };
          if (path === webhookPaths.mutateScaler) {
            // The many-valued body is over the value cap: refused before parsing, without its uid.
            expect(review.response.allowed).toBe(false);
            expect(review.response.status?.message).toContain("JSON values");
            counts.valueCap += 1;
          } else {
            expect(review.response.uid).toBe(uid);
            if (review.response.allowed) counts.allowed += 1;
          }
          counts.reviewed += 1;
          reviewedThisRound += 1;
        }
        expect(reviewedThisRound).toBeGreaterThanOrEqual(maxConcurrent);
        expect(child.exitCode, output).toBeNull();
      }
    } finally {
      clearInterval(sampler);
    }
    // Past maxConcurrent + maxQueued at once, the rest is refused at once rather than read.
    expect(counts.shed).toBeGreaterThan(0);
    expect(counts.valueCap).toBeGreaterThan(0);
    expect(child.exitCode, output).toBeNull();
    expect(peakRss).toBeLessThan(rssLimitMiB);

    // After the flood, an ordinary review is answered at once.
    const started = Date.now();
    const small = Buffer.from(
      `kind":{"group":"worker.gpustack.ai","version":"v1","kind":"ModelDeployment"},` +
        `"resource":{"group":"worker.gpustack.ai","version":"v1","resource":"modeldeployments"},` +
        `"namespace":"team","name":"small","operation":"CREATE","userInfo":{"username":"alice"},` +
        `"object":{"apiVersion":"worker.gpustack.ai/v1","kind":"ModelDeployment","metadata":{"name":"small"},"spec":{"roles":[{"name":"server","replicas":1}]}}}}`,
    );
    const after = await post(webhookPaths.validateTarget, "after-flood", small);
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body)).toMatchObject({ response: { uid: "after-flood", allowed: true } });
    console.log(
      `webhook load: ${rounds} rounds of ${parallel} parallel ~7 MiB reviews, heap limit ${heapLimitMiB} MiB, ` +
        `${maxConcurrent} at once + ${maxQueued} queued: ${counts.reviewed} reviewed (${counts.valueCap} over the value cap), ` +
        `${counts.shed} shed with 429; RSS ${baselineRss.toFixed(0)} MiB before, peak ${peakRss.toFixed(0)} MiB; ` +
        `a small review after the flood in ${Date.now() - started} ms`,
    );
  }, 300_000);
});
