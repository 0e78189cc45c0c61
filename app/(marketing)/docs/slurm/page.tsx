export const metadata = {
  title: "Attach your Slurm cluster in ten minutes",
  description:
    "Join a Slurm cluster to GPUForge as it is: one bridge on a login node mirrors its GPU nodes, runs GPUForge's placements as sbatch jobs on exactly the chosen nodes, and reports what Slurm answers.",
  alternates: { canonical: "/docs/slurm" },
};

const states: Array<[string, string]> = [
  ["IDLE, MIXED, ALLOCATED, COMPLETING, PLANNED", "available (as soon as Slurm reaches the node)"],
  [
    "DRAIN, DRAINED, DRAINING, FAIL, FAILING (by Slurm's admins)",
    "draining: no new work, running work continues; back to available when they resume it",
  ],
  ["DRAIN with a reason starting gpuforge: (ours)", "whatever GPUForge holds it in: quarantined, draining or maintenance"],
  ["MAINTENANCE (a maintenance reservation)", "maintenance"],
  ["RESERVED (an advance reservation)", "draining: only that reservation's jobs start there"],
  [
    "DOWN, NOT_RESPONDING, POWERED_DOWN, POWERING_UP, REBOOT_ISSUED, FUTURE, UNKNOWN",
    "offline at once; it returns where it was when Slurm has it up",
  ],
  ["a state or flag the bridge does not know", "nothing changes (the state is still shown)"],
];

export default function SlurmDocs() {
  return (
    <main className="mx-auto max-w-3xl px-6 py-16">
      <h1 className="text-4xl font-semibold tracking-tight text-slate-900">Attach your Slurm cluster in ten minutes</h1>
      <div className="article mt-8">
        <p>
          Your Slurm cluster joins GPUForge as it is. Nothing on the compute nodes changes and your users keep submitting with{" "}
          <code>sbatch</code>. One <strong>Slurm bridge</strong> runs on a login or controller node: it mirrors Slurm&apos;s GPU nodes into
          GPUForge, takes the placements GPUForge&apos;s scheduler makes (its quotas, priorities, fair share and reservations are the ones
          that count) and submits each one to Slurm on exactly the nodes and GPUs chosen. It then reports back what Slurm says: states,
          output, exit codes, start and end times. GPUForge places, Slurm runs.
        </p>
        <h2>What you need</h2>
        <ul>
          <li>
            Slurm 22.05 or later with <code>SelectType=select/cons_tres</code> and GPUs as typed GRES (<code>Gres=gpu:h100:8</code>, with{" "}
            <code>File=</code> lines in <code>gres.conf</code>).
          </li>
          <li>
            A host where Slurm&apos;s client tools work (<code>sinfo</code>, <code>scontrol</code>, <code>squeue</code>, <code>sbatch</code>
            , <code>scancel</code>, <code>srun</code>) and that reaches your GPUForge control plane over HTTPS. The bridge runs as a Slurm
            user that may drain and resume nodes: <code>root</code>, or a dedicated user made a Slurm operator (
            <code>sacctmgr modify user gpuforge set adminlevel=operator</code>). GPUForge&apos;s jobs run as that user.
          </li>
          <li>
            A directory every compute node can write and the bridge&apos;s host can read, such as <code>/shared/gpuforge</code>: jobs write
            their output there and the bridge ships it to GPUForge.
          </li>
          <li>
            A way to run container images. Tenant work runs only in containers, never on your hosts: Slurm&apos;s own container support (
            <code>oci.conf</code> with runc or crun), NVIDIA&apos;s pyxis, or a wrapper of your own (apptainer, podman, enroot).
          </li>
        </ul>

        <h2>1. Register the cluster (1 minute)</h2>
        <p>
          In the console, <em>Clusters → Register a cluster</em>, with <em>Run by: Slurm bridge</em>. Or with an operator key:
        </p>
        <pre tabIndex={0}>
          <code>{`curl -H "Authorization: Bearer $OPERATOR_KEY" -H content-type:application/json \\
  -d '{"name": "hpc-a100", "region": "campus", "kind": "slurm"}' https://gpuforge.example.com/api/clusters`}</code>
        </pre>

        <h2>2. Create its agent key (1 minute)</h2>
        <pre tabIndex={0}>
          <code>npm run key -- create --scope agent --cluster CLUSTER_ID --name hpc-a100-bridge</code>
        </pre>
        <p>
          The key is the cluster&apos;s, not one node&apos;s: the bridge speaks for every node of the cluster and for nothing else. Keep it
          in a file readable by root only (<code>/root/gpuforge.key</code>).
        </p>

        <h2>3. Install the bridge on the login node (3 minutes)</h2>
        <pre tabIndex={0}>
          <code>{`curl -fsSL https://gpuforge.example.com/install.sh | sudo sh -s -- --slurm-bridge \\
  --signing-key MCowBQYDK2VwAyEA… --key-file /root/gpuforge.key --output-dir /shared/gpuforge \\
  --container oci --oci-bundles /shared/oci-bundles --user gpuforge`}</code>
        </pre>
        <p>
          The installer checks the host first and changes nothing if Slurm&apos;s tools are missing or <code>scontrol ping</code> finds no
          controller. It installs the self-contained bridge (its own Node.js runtime, its Ed25519 signature checked against the control
          plane's public key, which the console shows beside an agent key) under <code>/opt/gpuforge-slurm-bridge</code>, writes{" "}
          <code>/etc/gpuforge/slurm-bridge.env</code> (mode 0600: it holds the key), keeps its state in{" "}
          <code>/var/lib/gpuforge-slurm-bridge</code> and enables <code>gpuforge-slurm-bridge.service</code>. Other options:{" "}
          <code>--container pyxis|wrapper|none</code>, <code>--wrapper PATH</code>, <code>--partitions gpu,long</code> (only these
          partitions&apos; nodes take GPUForge&apos;s work), <code>--slurm-conf FILE</code>, <code>--ingest-url</code>,{" "}
          <code>--no-start</code>. From a checkout, <code>npm run slurm-bridge</code> runs the same bridge with the variables below.
        </p>

        <h2>4. See it (2 minutes)</h2>
        <p>
          Within a poll (10 seconds) every Slurm node with GPUs appears under the cluster with its GPUs, its partitions and its Slurm state
          beside GPUForge&apos;s own. The fleet floor lists the cluster&apos;s partitions with their GPUs in use by GPUForge and by jobs
          submitted to Slurm directly. <code>GET /api/clusters/ID/slurm</code> answers the same picture.
        </p>

        <h2>5. Run a job (3 minutes)</h2>
        <pre tabIndex={0}>
          <code>{`curl -H "Authorization: Bearer $TENANT_KEY" -H content-type:application/json -d '{
  "name": "finetune", "gpu_count": 8, "gpu_type": "A100", "cluster_id": "CLUSTER_ID",
  "image": "nvcr.io/nvidia/pytorch:24.05-py3", "command": "python train.py", "duration_s": 7200
}' https://gpuforge.example.com/api/jobs`}</code>
        </pre>
        <p>
          The job page shows its Slurm job id and every state Slurm reported; <code>squeue</code> shows the job under the tenant&apos;s
          account. Its output streams into the job page, and its cost runs from Slurm&apos;s start to Slurm&apos;s end.
        </p>

        <h2>How each placement is submitted</h2>
        <ul>
          <li>
            <code>--nodelist</code> and <code>--nodes</code> of exactly the nodes chosen, <code>--gres=gpu:TYPE:N</code> per node, a share
            of each node&apos;s CPUs and memory per GPU (<code>--cpus-per-gpu</code>, <code>--mem-per-gpu</code>), <code>--time</code> from{" "}
            <code>duration_s</code> (rounded up to whole minutes), and a partition that holds the nodes, is up and allows that time (the
            default partition first). A gang with different GPU counts per node (8 + 2) becomes a heterogeneous job, one component per group
            of nodes.
          </li>
          <li>
            <code>--no-requeue</code>: Slurm never restarts GPUForge&apos;s work by itself; GPUForge places it again by its own rules.
          </li>
          <li>
            <code>--comment=gpuforge:JOB:ATTEMPT:FENCE</code>: the placement&apos;s fence, so every report about the Slurm job is checked
            like any agent&apos;s. A bridge that lost its state finds its jobs again by their comment (and its own user); a job of another
            user with such a comment is someone else&apos;s.
          </li>
          <li>
            <code>--account</code>: one account per tenant (<code>gf-acme-research</code>), chosen the first time the tenant&apos;s work
            goes to Slurm and kept. With <code>AccountingStorageType=accounting_storage/none</code> nothing checks it: it is a label on the
            job (squeue, SLURM_JOB_ACCOUNT, job_submit plugins) and GPUForge&apos;s quotas and billing are the ones that count. With
            slurmdbd and <code>AccountingStorageEnforce=associations</code>, create each tenant&apos;s account once (
            <code>sacctmgr -i add account gf-acme-research</code> and add the bridge&apos;s user to it); Slurm&apos;s own accounting then
            sees the tenants apart.
          </li>
          <li>
            The batch script is the bridge&apos;s own: it sets the job&apos;s environment and runs one task per node with <code>srun</code>;
            the tenant&apos;s command runs only inside the task&apos;s container. Work without an image runs nothing and holds its GPUs for
            its time.
          </li>
        </ul>

        <h2>Containers</h2>
        <p>
          <strong>Slurm&apos;s own (oci):</strong> each image is an OCI bundle in <code>SLURM_OCI_BUNDLES</code>, named after the image with
          every character but letters, digits, dot, dash and underscore made an underscore (<code>nvcr.io/nvidia/pytorch:24.05-py3</code> is{" "}
          <code>nvcr.io_nvidia_pytorch_24.05-py3</code>); unpack one with{" "}
          <code>skopeo copy docker://IMAGE oci:/tmp/img:latest &amp;&amp; umoci unpack --image /tmp/img:latest BUNDLE</code>. A bundle that
          is missing fails the job before it is submitted, saying where it was looked for. An <code>oci.conf</code> for runc that lets{" "}
          <code>scancel</code> and time limits stop a container (name containers without the task id, and kill with SIGKILL):
        </p>
        <pre tabIndex={0}>
          <code>{`RunTimeQuery="runc --root=/run/slurm-runc state %n.%u.%j.%s"
RunTimeKill="runc --root=/run/slurm-runc kill -a %n.%u.%j.%s KILL"
RunTimeDelete="runc --root=/run/slurm-runc delete --force %n.%u.%j.%s"
RunTimeRun="runc --root=/run/slurm-runc run %n.%u.%j.%s -b %b"`}</code>
        </pre>
        <p>
          Slurm 22.05 cannot start a <code>--container</code> step across a heterogeneous job&apos;s components: on it, a gang with uneven
          GPU counts per node is not submitted, and the job says why. Pyxis and a wrapper have no such limit.
        </p>
        <p>
          <strong>pyxis:</strong> <code>srun --container-image=IMAGE</code>. <strong>A wrapper:</strong> any program run as{" "}
          <code>WRAPPER IMAGE /bin/sh -c …</code> inside each task, for example with apptainer:
        </p>
        <pre tabIndex={0}>
          <code>{`#!/bin/sh
image="$1"; shift
exec apptainer exec --nv "docker://$image" "$@"`}</code>
        </pre>

        <h2>Node states</h2>
        <p>Slurm&apos;s states map onto GPUForge&apos;s node lifecycle; the Slurm state and reason are shown beside GPUForge&apos;s.</p>
        <table>
          <thead>
            <tr>
              <th>Slurm</th>
              <th>GPUForge</th>
            </tr>
          </thead>
          <tbody>
            {states.map(([slurm, ours]) => (
              <tr key={slurm}>
                <td>{slurm}</td>
                <td>{ours}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p>
          A GPUForge quarantine, drain or maintenance (an operator&apos;s, or an automatic quarantine) drains the node in Slurm with a
          reason that starts <code>gpuforge:</code>; returning it to service in GPUForge resumes it. A drain made by your admins never
          carries that prefix, and GPUForge never lifts it: the node takes no GPUForge work until they resume it in Slurm.
        </p>

        <h2>Jobs submitted to Slurm directly</h2>
        <p>
          Your users&apos; own jobs keep running. The GPUs they hold are marked as foreign load on the node and never placed on; so are a
          node&apos;s free GPUs once its CPUs or memory are all allocated. They are free again when those jobs end.
        </p>

        <h2>How jobs end</h2>
        <ul>
          <li>COMPLETED is completed; FAILED, TIMEOUT, OUT_OF_MEMORY and DEADLINE are failed with their exit code (retries apply).</li>
          <li>NODE_FAIL is failed: the job runs again if it has retries left. Slurm&apos;s node is offline in GPUForge meanwhile.</li>
          <li>PREEMPTED, BOOT_FAIL and LAUNCH_FAILED run again without spending a retry.</li>
          <li>
            CANCELLED by someone in Slurm is failed; a tenant&apos;s cancel in GPUForge reaches Slurm as <code>scancel</code>.
          </li>
          <li>
            A job Slurm does not start within <code>SLURM_PENDING_TIMEOUT_S</code> (300 s) is cancelled and placed again without spending a
            retry. Nothing is billed before Slurm starts it.
          </li>
        </ul>

        <h2>When something goes down</h2>
        <p>
          Restart the bridge whenever you like: Slurm keeps running its jobs, and the next bridge process follows them to their end and
          reports what it missed (billed to Slurm&apos;s EndTime, not to when the report arrived). A placement is submitted at most once:
          the bridge records it before it calls <code>sbatch</code>. If the bridge cannot reach the control plane for the node lease (
          <code>NODE_OFFLINE_AFTER_S</code>, 90 s), the nodes go offline in GPUForge, their work is placed elsewhere, and the bridge cancels
          its Slurm jobs. Keep Slurm&apos;s <code>MinJobAge</code> above that lease, so that Slurm still knows how a job ended when the
          bridge asks. Only one bridge runs a cluster at a time: a second one (a standby) waits until the first has been silent for the
          lease, then takes over.
        </p>

        <h2>Configuration</h2>
        <ul>
          <li>
            <code>GPUFORGE_URL</code>, <code>GPUFORGE_AGENT_KEY</code> (required); <code>GPUFORGE_INGEST_URL</code> for heartbeats.
          </li>
          <li>
            <code>SLURM_CONF</code>, <code>SLURM_BIN_DIR</code>: where Slurm is configured and where its tools are.
          </li>
          <li>
            <code>SLURM_OUTPUT_DIR</code>, <code>SLURM_BRIDGE_STATE_DIR</code>, <code>SLURM_CONTAINER</code>, <code>SLURM_OCI_BUNDLES</code>
            , <code>SLURM_CONTAINER_WRAPPER</code>, <code>SLURM_PARTITIONS</code>.
          </li>
          <li>
            <code>SLURM_GPU_TYPES</code> maps GRES types to GPUForge GPU types (<code>a100_80g=A100-80G</code>; by default the GRES type in
            upper case); <code>SLURM_GPU_MEMORY_MB</code> gives GPU memory per type where the bridge does not know it.
          </li>
          <li>
            <code>SLURM_POLL_INTERVAL_S</code> (10), <code>SLURM_PENDING_TIMEOUT_S</code> (300), <code>SLURM_HEARTBEAT_CONCURRENCY</code>{" "}
            (8).
          </li>
        </ul>

        <h2>Security</h2>
        <p>
          The agent key never reaches Slurm or a job: Slurm&apos;s tools run with a minimal environment. A job&apos;s environment, including
          the token it may post its outputs with, is in its batch script, which the bridge&apos;s user and Slurm&apos;s admins can read (
          <code>scontrol write batch_script</code>): run the bridge as a dedicated user. Every report the bridge makes is fenced and scoped
          to its own cluster: a key of one cluster cannot report for another&apos;s nodes or jobs.
        </p>

        <h2>What it does not do</h2>
        <ul>
          <li>
            It uses Slurm&apos;s command-line tools only; <code>slurmrestd</code> is not needed (and not used).
          </li>
          <li>
            Slurm has no GPU telemetry of its own, so GPU utilization charts stay empty for Slurm nodes; run an exporter such as DCGM&apos;s
            beside it for those.
          </li>
          <li>
            Pods and inference endpoints are not placed on Slurm clusters: they are long-lived services, which Slurm batch jobs are not.
          </li>
          <li>
            A GPUForge reservation of a Slurm node keeps GPUForge&apos;s other tenants off it, not Slurm&apos;s own users: reserve it in
            Slurm as well if they must stay off.
          </li>
        </ul>
      </div>
    </main>
  );
}
