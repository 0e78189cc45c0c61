// What the bridge submits for one placement: sbatch's options (exactly the chosen nodes and GPUs,
// the time limit, the partition, the tenant's account, the placement named in the comment) and the
// batch script. Pure (no I/O).
//
// The batch script is the bridge's own: it sets the job's environment and runs one task per node
// with srun, and the tenant's command runs only inside that task's container, through Slurm's
// container support (`srun --container=BUNDLE`, oci.conf), pyxis (`--container-image`), or the
// site's own wrapper (`WRAPPER IMAGE sh -c …`, apptainer or podman say). A command is never run on
// the host: work without an image runs nothing but holds its GPUs for its time (`sleep`).
import type { JobAssignment } from "../../../lib/fleet/assignments";
import { componentArgs, type Component } from "../../../lib/slurm/submission";

type ContainerMode = "oci" | "pyxis" | "wrapper" | "none";

export interface ContainerSupport {
  mode: ContainerMode;
  /** oci: the directory holding one OCI bundle per image (bundleDirName) */
  bundles?: string;
  /** wrapper: the program that runs `IMAGE [command…]` in a container */
  wrapper?: string;
}

/** The bundle directory of an image: `nvcr.io/nvidia/pytorch:24.05-py3` → `nvcr.io_nvidia_pytorch_24.05-py3`. */
function bundleDirName(image: string): string {
  return image.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** A string as one shell word. */
const shellWord = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

interface Submission {
  args: string[];
  script: string;
}

export type Built = { ok: true; submission: Submission } | { ok: false; reason: string };

export interface BuildInput {
  assignment: JobAssignment;
  components: Component[];
  durationS: number | null;
  account: string;
  comment: string;
  jobName: string;
  outputDir: string;
  container: ContainerSupport;
  /** the control plane's URL, for the outputs address handed to the job */
  baseUrl: string;
  /** where the batch script finds srun (sbatch --export=NONE gives it no PATH of its own) */
  path: string;
  /** whether the image's bundle exists (oci), when the bridge can see the bundles' directory */
  bundleExists?: (dir: string) => boolean;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function buildSubmission(input: BuildInput): Built {
  const a = input.assignment;
  const env: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(a.env ?? {})) {
    if (!ENV_NAME.test(k) || k.startsWith("GPUFORGE_"))
      return { ok: false, reason: `the environment variable name ${JSON.stringify(k)} cannot be set` };
    env.push([k, v]);
  }
  env.push(["GPUFORGE_JOB_ID", a.job_id], ["GPUFORGE_ATTEMPT", String(a.attempt)]);
  if (a.outputs_path && a.report_token)
    env.push(["GPUFORGE_OUTPUTS_URL", input.baseUrl + a.outputs_path], ["GPUFORGE_REPORT_TOKEN", a.report_token]);
  if (a.command !== undefined) env.push(["GPUFORGE_COMMAND", a.command]);
  for (const [k, v] of env)
    if (v.includes("\u0000")) return { ok: false, reason: `the value of ${k} holds a NUL byte, which no shell can pass on` };

  const het = input.components.length > 1;
  const srun = ["srun", "--export=ALL", "--kill-on-bad-exit=1", ...(het ? [`--het-group=0-${input.components.length - 1}`] : [])];
  let run: string;
  if (!a.image && a.command === undefined) {
    // work that runs nothing: it holds its GPUs for its time
    run = `exec sleep ${Math.max(0, Math.floor(a.duration_s ?? 0))}`;
  } else if (!a.image) {
    return { ok: false, reason: "a command runs only inside a container image, and the assignment names none" };
  } else {
    // In a container's own PID namespace the command's shell would be PID 1, which ignores SIGTERM:
    // it runs as that shell's child instead, which Slurm's scancel and time limit can stop.
    const command = a.command !== undefined ? ` /bin/sh -c 'eval "$GPUFORGE_COMMAND" & wait $!'` : "";
    switch (input.container.mode) {
      case "oci": {
        if (!input.container.bundles) return { ok: false, reason: "no OCI bundle directory is configured (SLURM_OCI_BUNDLES)" };
        const dir = `${input.container.bundles.replace(/\/$/, "")}/${bundleDirName(a.image)}`;
        if (input.bundleExists && !input.bundleExists(dir))
          return {
            ok: false,
            reason: `no OCI bundle for ${a.image} at ${dir}: unpack the image there (skopeo copy docker://${a.image} oci:/tmp/img:latest && umoci unpack --image /tmp/img:latest ${dir})`,
          };
        if (a.command === undefined) return { ok: false, reason: "an OCI bundle runs the command it is given: give the job a command" };
        run = `exec ${[...srun, `--container=${shellWord(dir)}`].join(" ")}${command}`;
        break;
      }
      case "pyxis":
        if (a.command === undefined) return { ok: false, reason: "pyxis runs the command it is given: give the job a command" };
        run = `exec ${[...srun, `--container-image=${shellWord(a.image)}`].join(" ")}${command}`;
        break;
      case "wrapper":
        if (!input.container.wrapper) return { ok: false, reason: "no container wrapper is configured (SLURM_CONTAINER_WRAPPER)" };
        run = `exec ${[...srun, shellWord(input.container.wrapper), shellWord(a.image)].join(" ")}${command}`;
        break;
      case "none":
        return { ok: false, reason: "this Slurm cluster has no container support configured, and tenant work runs only in containers" };
    }
  }
  const script = [
    "#!/bin/sh",
    `# GPUForge job ${a.job_id}, attempt ${a.attempt}: submitted by the GPUForge Slurm bridge.`,
    "# The tenant's command runs only inside its container image, one task per node, never on the host.",
    `export PATH=${shellWord(input.path)}`,
    ...env.map(([k, v]) => `export ${k}=${shellWord(v)}`),
    run,
    "",
  ].join("\n");
  const common = [
    "--parsable",
    `--job-name=${input.jobName}`,
    `--comment=${input.comment}`,
    `--account=${input.account}`,
    "--no-requeue",
    `--chdir=${input.outputDir}`,
    `--output=${input.outputDir}/gpuforge-%j.out`,
    `--error=${input.outputDir}/gpuforge-%j.err`,
  ];
  const args: string[] = [...common];
  input.components.forEach((c, i) => {
    if (i > 0) args.push(":");
    args.push(...componentArgs(c, input.durationS));
  });
  return { ok: true, submission: { args, script } };
}
