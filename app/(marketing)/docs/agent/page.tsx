export const metadata = {
  title: "Install the node agent",
  description:
    "Install the GPUForge agent on GPU nodes with one command, as a container image or a Kubernetes DaemonSet: containers only, fenced reports, workload logs, self-fencing.",
  alternates: { canonical: "/docs/agent" },
};

export default function AgentDocs() {
  return (
    <main className="mx-auto max-w-3xl px-6 py-16">
      <h1 className="text-4xl font-semibold tracking-tight text-slate-900">Install the node agent</h1>
      <div className="article mt-8">
        <p>
          The agent runs on every GPU node. The node needs the NVIDIA driver (<code>nvidia-smi</code>), Docker Engine with the NVIDIA
          Container Toolkit (tenant work runs only in containers), systemd, and an <strong>agent key</strong> of its cluster. It does not
          need Node.js: the installer brings the agent with its own runtime.
        </p>
        <h2>1. Create an agent key</h2>
        <p>
          From the control plane&apos;s host (or <code>POST /api/api-keys</code> with an operator key):
        </p>
        <pre>
          <code>npm run key -- create --scope agent --cluster CLUSTER_ID --name rack-12-agents</code>
        </pre>
        <p>
          The full key is printed once (the last line); only its hash is stored. An agent key registers and reports for its own
          cluster&apos;s nodes and nothing else; add <code>--node NODE_ID</code> to bind a key to one node once it is registered, so a
          compromised node can speak for itself only.
        </p>
        <h2>2. Install with one command</h2>
        <pre>
          <code>curl -fsSL https://gpuforge.example.com/install.sh | sudo sh -s -- --key gf_…</code>
        </pre>
        <p>
          On a node other people can log in to, keep the key off the command line (where the process list shows it) with{" "}
          <code>--key-file /root/gpuforge.key</code> instead. Serve the control plane over HTTPS: the installer warns when it is pointed at
          plain <code>http://</code> anywhere but this machine.
        </p>
        <p>
          The script checks the node first and changes nothing if <code>nvidia-smi</code> cannot read the GPUs, Docker&apos;s engine does
          not answer or systemd is missing. It then installs the agent under <code>/opt/gpuforge-agent</code> (checked against its SHA-256),
          writes <code>/etc/gpuforge/agent.env</code> with mode 0600 (it holds the key), keeps state in <code>/var/lib/gpuforge-agent</code>
          , and enables <code>gpuforge-agent.service</code>, which systemd restarts if it stops. Options: <code>--ingest-url</code>,{" "}
          <code>--hostname</code>, <code>--pod</code>, <code>--rack</code>, <code>--serve-image</code>, <code>--no-start</code>,{" "}
          <code>--root DIR</code>.
        </p>
        <p>
          <strong>Upgrades:</strong> run the same command again (the key may be left out). The new version replaces the old, the
          configuration and the state stay, and jobs keep running: stopping the agent never stops the containers it started, and the new
          agent process finds them again.
        </p>
        <h2>On Kubernetes, or as a container image</h2>
        <p>
          <code>agent/Dockerfile</code> builds the agent image; <code>agent/deploy/daemonset.yaml</code> runs it on every node labelled{" "}
          <code>nvidia.com/gpu.present=true</code>, with the key in a Secret, the node&apos;s name as its hostname, Docker&apos;s socket and
          the state directory mounted from the host:
        </p>
        <pre>
          <code>
            kubectl -n gpuforge create secret generic gpuforge-agent \{"\n"} --from-literal=GPUFORGE_URL=https://gpuforge.example.com \
            {"\n"} --from-literal=GPUFORGE_AGENT_KEY=gf_…{"\n"}kubectl apply -f agent/deploy/daemonset.yaml
          </code>
        </pre>
        <h2>Configuration</h2>
        <ul>
          <li>
            <code>GPUFORGE_URL</code>, <code>GPUFORGE_AGENT_KEY</code>: the control plane and the key. The key never reaches a workload.
          </li>
          <li>
            <code>GPUFORGE_INGEST_URL</code> (optional): heartbeats and metrics go to an ingest server.
          </li>
          <li>
            <code>HEARTBEAT_INTERVAL_S</code> (default 15), <code>METRICS_INTERVAL_S</code> (default 10).
          </li>
          <li>
            <code>AGENT_STATE_DIR</code>: the placements it started, exit reports and log chunks not yet delivered.
          </li>
          <li>
            <code>GPUFORGE_SERVE_IMAGE</code> (optional): the serving image for endpoints that name none.
          </li>
        </ul>
        <h2>How it runs work</h2>
        <ul>
          <li>
            <strong>Containers only.</strong> Each job attempt and each endpoint replica runs in a container, on its own GPUs (
            <code>--gpus device=…</code>), on the <code>gpuforge-workloads</code> bridge network (created by the agent with traffic between
            containers turned off, so tenants on one node cannot reach each other), with no new privileges, no raw sockets and the
            node&apos;s CPU, memory and process limits in proportion to the GPUs it holds. The image is checked as an image reference and
            passed after <code>--</code>; the command runs as <code>sh -c</code> inside it. A job with a command and no image runs in the
            operator&apos;s default image or is refused when it is submitted. The container&apos;s environment is its own: for jobs, the
            job&apos;s own variables (a pipeline step&apos;s <code>env</code>, resolved), <code>GPUFORGE_JOB_ID</code>,{" "}
            <code>GPUFORGE_ATTEMPT</code>, <code>GPUFORGE_OUTPUTS_URL</code> and <code>GPUFORGE_REPORT_TOKEN</code>, a credential that posts
            that one placement&apos;s outputs (
            <code>
              {"{"}&quot;outputs&quot;: {"{…}}"}
            </code>
            , what later pipeline steps read) and nothing else, and stops working when the placement ends; for replicas the model, the
            metrics URL and <code>GPUFORGE_REPORT_TOKEN</code>, a credential that reports that one replica&apos;s samples and nothing else.
          </li>
          <li>
            <strong>Once per placement.</strong> Every assignment names its placement (an <code>attempt</code> and a <code>fence</code>).
            The agent remembers every placement it started, on disk, until the control plane has its exit and no longer assigns it, so a
            heartbeat racing an exit report, or an agent restart, never starts the same work twice.
          </li>
          <li>
            <strong>Fenced reports.</strong> Exit reports, log chunks, outputs and replica samples carry the placement&apos;s attempt and
            fence. One about a placement the control plane has moved on from answers <code>409 stale_report</code> and changes nothing, so a
            node that was cut off cannot end or free work that now runs elsewhere.
          </li>
          <li>
            <strong>Self-fencing.</strong> The heartbeat answers with the node&apos;s lease (<code>lease_s</code>). An agent that cannot
            heartbeat for that long stops everything it runs (the control plane has moved it by then), says so in its log, and reports each
            run as interrupted when it reaches the control plane again. Interrupted runs are requeued without spending the tenant&apos;s
            retries.
          </li>
          <li>
            <strong>Logs.</strong> stdout and stderr of every container are cut into sequenced chunks, kept on disk and shipped until
            acknowledged; the control plane stores each chunk once and caps each run&apos;s log (<code>WORKLOAD_LOG_MAX_BYTES</code>, 8 MiB
            by default; a marker says where it stopped) for <code>WORKLOAD_LOG_RETENTION_DAYS</code> (14). Tenants read them on the job and
            endpoint pages or through <code>GET /api/jobs/&#123;id&#125;/logs</code>.
          </li>
        </ul>
        <h2>Block the metadata service</h2>
        <p>
          On clouds with an instance metadata service, stop containers from reaching it (it may hand out the node&apos;s cloud credentials):{" "}
          <code>iptables -I DOCKER-USER -d 169.254.169.254 -j DROP</code>, persisted with your firewall tooling, plus rules for any other
          internal service tenants must not reach.
        </p>
        <h2>What it reads</h2>
        <p>
          <code>
            nvidia-smi --query-gpu=…,driver_version,ecc.mode.current,ecc.errors.uncorrected.volatile.total --format=csv,noheader,nounits
          </code>{" "}
          for inventory, metrics and uncorrected ECC errors (older drivers that refuse those fields are read without them);{" "}
          <code>nvidia-smi --query-remapped-rows</code> for row-remapping failures; the header of <code>nvidia-smi</code> for the CUDA
          version; <code>/etc/os-release</code> and the kernel release. <code>[N/A]</code> and missing fields are tolerated. XID errors are
          read from the kernel log. Fatal XIDs, uncorrected ECC errors and remapping failures mark the GPU unhealthy at once.
        </p>
        <h2>Node lifecycle</h2>
        <p>
          A new node is <em>registered</em> until its first heartbeat makes it <em>available</em>. Operators drain, put in maintenance,
          quarantine and return nodes; missing heartbeats for <code>NODE_OFFLINE_AFTER_S</code> (90 s) mark it <em>offline</em>, its work is
          requeued, and the next heartbeat brings it back to where it was — never out of maintenance or quarantine.
        </p>
      </div>
    </main>
  );
}
