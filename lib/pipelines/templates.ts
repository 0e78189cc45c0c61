// Starting points for the pipeline editor: the three shapes agentic work takes most often. Pure;
// filled in with the tenant's own GPU types and endpoints so a template is valid as it stands
// wherever it can be.

interface TemplateContext {
  gpuType: string;
  /** one of the tenant's endpoints, for inference steps */
  endpoint?: string;
}

export interface PipelineTemplate {
  id: string;
  title: string;
  description: string;
  spec: (c: TemplateContext) => Record<string, unknown>;
}

const IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3";

export const PIPELINE_TEMPLATES: PipelineTemplate[] = [
  {
    id: "finetune-evaluate",
    title: "Fine-tune, then evaluate",
    description: "A GPU job trains and posts its checkpoint; the evaluation job reads it from the training step's outputs.",
    spec: (c) => ({
      name: "finetune-then-evaluate",
      deadline_s: 6 * 3600,
      steps: [
        {
          name: "finetune",
          gpu_count: 2,
          gpu_type: c.gpuType,
          image: IMAGE,
          command: "torchrun --nproc_per_node=2 train.py --out /workspace/ckpt",
          duration_s: 180,
          outputs: ["checkpoint", "train_loss"],
          retry: { max: 2, backoff_s: 30, on_exit_codes: [137, 143] },
        },
        {
          name: "evaluate",
          depends_on: ["finetune"],
          gpu_count: 1,
          gpu_type: c.gpuType,
          image: IMAGE,
          command: "python -m lm_eval --model hf --model_args pretrained=${steps.finetune.outputs.checkpoint}",
          duration_s: 120,
          env: { TRAIN_LOSS: "${steps.finetune.outputs.train_loss}" },
        },
      ],
    }),
  },
  {
    id: "plan-act-check",
    title: "Plan → act → check loop",
    description:
      "A model plans, a GPU job acts on the plan, the model checks the result; the loop runs again with the feedback until the check passes (at most 4 times).",
    spec: (c) => ({
      name: "plan-act-check",
      deadline_s: 3 * 3600,
      steps: [
        {
          name: "plan",
          kind: "inference",
          request: {
            endpoint: c.endpoint ?? "my-endpoint",
            body: {
              messages: [
                {
                  role: "user",
                  content: 'Plan the next training run. Feedback so far: ${steps.check.outputs.body.choices[0].message.content ?? "none"}',
                },
              ],
              max_tokens: 256,
            },
          },
          timeout_s: 60,
          retry: { max: 3, backoff_s: 5 },
        },
        {
          name: "act",
          depends_on: ["plan"],
          gpu_count: 1,
          gpu_type: c.gpuType,
          image: IMAGE,
          command: "python act.py --iteration ${loop.iteration}",
          env: { PLAN: "${steps.plan.outputs.body.choices[0].message.content}" },
          duration_s: 60,
        },
        {
          name: "check",
          kind: "inference",
          depends_on: ["act"],
          request: {
            endpoint: c.endpoint ?? "my-endpoint",
            body: {
              messages: [{ role: "user", content: "Grade iteration ${loop.iteration} of the plan. Reply PASS or RETRY." }],
              max_tokens: 8,
            },
          },
          retry: { max: 3, backoff_s: 5 },
          repeat: {
            from: "plan",
            until: 'steps.check.outputs.body.choices[0].message.content == "PASS"',
            max: 4,
            timeout_s: 3600,
            on_exhausted: "fail",
          },
        },
      ],
    }),
  },
  {
    id: "batch-fanout",
    title: "Batch inference fan-out",
    description: "A job splits the input into shards; three inference calls run in parallel, one per shard; a job merges the answers.",
    spec: (c) => ({
      name: "batch-inference",
      steps: [
        {
          name: "split",
          gpu_count: 1,
          gpu_type: c.gpuType,
          image: IMAGE,
          command: "python split.py --shards 3",
          duration_s: 60,
          outputs: ["shards"],
        },
        ...[0, 1, 2].map((i) => ({
          name: `infer-${i}`,
          kind: "inference",
          depends_on: ["split"],
          request: {
            endpoint: c.endpoint ?? "my-endpoint",
            body: { messages: [{ role: "user", content: `Summarise: \${steps.split.outputs.shards[${i}]}` }] },
          },
          retry: { max: 2 },
        })),
        {
          name: "merge",
          depends_on: ["infer-0", "infer-1", "infer-2"],
          gpu_count: 1,
          gpu_type: c.gpuType,
          image: IMAGE,
          command: "python merge.py",
          duration_s: 60,
          env: {
            A: "${steps.infer-0.outputs.body.choices[0].message.content}",
            B: "${steps.infer-1.outputs.body.choices[0].message.content}",
            C: "${steps.infer-2.outputs.body.choices[0].message.content}",
          },
        },
      ],
    }),
  },
];
