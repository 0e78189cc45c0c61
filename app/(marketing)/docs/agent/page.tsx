export const metadata = { title: "Install the node agent", description: "Run the GPUForge agent on GPU nodes: nvidia-smi inventory and metrics, registration, heartbeats, job execution and durable exit reports.", alternates: { canonical: "/docs/agent" } };

export default function AgentDocs() {
  return (
    <main className="mx-auto max-w-3xl px-6 py-16">
      <h1 className="text-4xl font-semibold tracking-tight text-slate-900">Install the node agent</h1>
      <div className="article mt-8">
        <p>The agent runs on every GPU node. It needs Node.js 20, the NVIDIA driver (for <code>nvidia-smi</code>) and an <strong>agent key</strong> bound to the node&apos;s cluster.</p>
        <h2>1. Create an agent key</h2>
        <p>In the operator console, open <em>Clusters</em>, pick the cluster and create an agent key, or from the control plane&apos;s host:</p>
        <pre><code>npm run key -- create --scope agent --cluster CLUSTER_ID --name rack-12-agents</code></pre>
        <p>The full key is printed once (the last line); only its hash is stored. An agent key can register and report for its own cluster&apos;s nodes and nothing else.</p>
        <h2>2. Run the agent</h2>
        <pre><code>GPUFORGE_URL=https://gpuforge.example.com \{"\n"}GPUFORGE_AGENT_KEY=gf_… \{"\n"}npm run agent</code></pre>
        <ul>
          <li><code>HEARTBEAT_INTERVAL_S</code> (default 15): how often the node reports it is alive and receives its assignments.</li>
          <li><code>METRICS_INTERVAL_S</code> (default 10): how often GPU samples are posted, in batches.</li>
          <li><code>AGENT_STATE_DIR</code>: where exit reports wait until the control plane has them.</li>
          <li><code>GPUFORGE_SERVE_COMMAND</code> (optional): the command that serves a model for an inference endpoint replica, started once per replica assigned to the node.</li>
        </ul>
        <h2>What it reads</h2>
        <p><code>nvidia-smi --query-gpu=uuid,index,name,memory.total,memory.used,utilization.gpu,temperature.gpu,power.draw,… --format=csv,noheader,nounits</code> for inventory and metrics; <code>[N/A]</code> and missing fields are tolerated. XID errors are read from the kernel log when the agent may. Fatal XIDs (48, 64, 74, 79, 95 and the others NVIDIA says to reset or drain for) mark the GPU unhealthy at once.</p>
        <h2>What it does</h2>
        <ul>
          <li>Registers the node idempotently by cluster and hostname; GPUs are matched by UUID, and a GPU that leaves the inventory is marked missing, never deleted.</li>
          <li>Heartbeats and receives the node&apos;s assignments: the jobs it must run or stop, and the inference endpoint replicas it must serve.</li>
          <li>Runs each assignment as a container when Docker is available, otherwise as a local process with <code>CUDA_VISIBLE_DEVICES</code> set to its GPUs.</li>
          <li>Reports each exit through <code>PATCH /api/jobs/&#123;id&#125;</code>; reports are kept on disk and retried with backoff while the control plane is unreachable, so a finished job is never lost.</li>
        </ul>
        <h2>Serving endpoint replicas</h2>
        <p>With <code>GPUFORGE_SERVE_COMMAND</code> set (for example <code>vllm serve &quot;$GPUFORGE_MODEL&quot; --port 8000</code> wrapped by your metrics sidecar), the agent starts it for each replica with <code>CUDA_VISIBLE_DEVICES</code>, <code>GPUFORGE_MODEL</code>, <code>GPUFORGE_ENDPOINT_ID</code>, <code>GPUFORGE_REPLICA_ID</code>, <code>GPUFORGE_METRICS_URL</code> and <code>GPUFORGE_AGENT_KEY</code> in its environment, and stops it when the replica is moved or the endpoint scales down. The serving side posts its samples (requests, errors, p50/p95/p99, tokens/s) to the metrics URL; its first healthy sample makes the replica ready. If the process dies, the agent reports the replica unhealthy at once and restarts it; the control plane replaces a replica that stays unhealthy.</p>
        <h2>Node lifecycle</h2>
        <p>A new node is <em>registered</em> until its first heartbeat makes it <em>available</em>. Operators drain, put in maintenance, quarantine and return nodes; missing heartbeats for <code>NODE_OFFLINE_AFTER_S</code> (90 s) mark it <em>offline</em>, and the next heartbeat brings it back to where it was — never out of maintenance or quarantine.</p>
      </div>
    </main>
  );
}
