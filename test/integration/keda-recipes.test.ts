/**
 * The external-metrics recipes of docs/install.md are objects a real API
 * server accepts: every YAML block of that section (the KEDA ScaledObjects,
 * the HPA, the reader Role) goes through `kubectl apply --dry-run=server
 * --validate=strict`, the ScaledObjects against the CRD shipped in KEDA's own
 * Go module (Apache-2.0), fetched with the ordinary Go client.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, loadYaml, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { runKubectl } from "../../harness/helm.js";

const kedaModule = "github.com/kedacore/keda/v2";
const kedaVersion = "v2.21.0";
const root = join(import.meta.dirname, "..", "..");

/** The module's directory in the Go module cache (downloaded once through the module proxy). */
function kedaModuleDir(): string {
  const go = existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : "go";
  const output = execFileSync(go, ["mod", "download", "-json", `${kedaModule}@${kedaVersion}`], {
    cwd: tmpdir(),
    encoding: "utf8",
    env: { ...process.env, GOFLAGS: "", GOTOOLCHAIN: "local", GOWORK: "off" },
    timeout: 300_000,
  });
  const dir = (JSON.parse(output) as { Dir?: string }).Dir;
  if (dir === undefined) throw new Error(`go mod download ${kedaModule}@${kedaVersion} named no directory: ${output}`);
  return dir;
}

/** The YAML blocks of the external metrics section of docs/install.md. */
function recipes(): string[] {
  const doc = readFileSync(join(root, "docs", "install.md"), "utf8");
  const section = doc.slice(doc.indexOf("## External metrics"));
  return [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
}

describe("external metrics recipes in docs/install.md", () => {
  let controlPlane: ControlPlane;

  beforeAll(async () => {
    const crdPath = join(kedaModuleDir(), "config", "crd", "bases", "keda.sh_scaledobjects.yaml");
    controlPlane = await startControlPlane();
    await controlPlane.applyCrd(loadYaml<V1CustomResourceDefinition>(readFileSync(crdPath, "utf8")));
    await controlPlane.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: "llm" } } });
  }, 360_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  function dryRun(manifest: string): ReturnType<typeof runKubectl> {
    return runKubectl(
      ["--kubeconfig", controlPlane.kubeConfigPath, "apply", "--dry-run=server", "--validate=strict", "-f", "-"],
      { input: manifest },
    );
  }

  it("has both KEDA ScaledObjects, the HPA and the reader Role", () => {
    const kinds = recipes().map((text) => /^kind: (\S+)/m.exec(text)?.[1]);
    expect(kinds.sort()).toEqual(["HorizontalPodAutoscaler", "Role", "ScaledObject", "ScaledObject"]);
  });

  it.each(recipes().map((text) => [/^metadata: \{ name: ([^,]+),/m.exec(text)?.[1] ?? "?", text]))(
    "the API server accepts %s",
    (_name, text) => {
      const result = dryRun(text);
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/\(server dry run\)\n?$/);
    },
  );

  it("rejects a misspelled ScaledObject field, so the acceptance above means something", () => {
    const scaledObject = recipes().find((text) => text.includes("type: prometheus")) ?? "";
    const result = dryRun(scaledObject.replace("maxReplicaCount", "maxReplicasCount"));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("maxReplicasCount");
  });
});
