-- Every metrics report updates its GPUs' current minute in gpu_metrics_1m. With half of each page
-- left free, those updates stay on their page as heap-only tuples and skip both index inserts:
-- measured on 1,000-sample batches, insert + rollup went from 24.9 to 22.2 ms (raw insert: 13.3 ms).
ALTER TABLE "gpu_metrics_1m" SET (fillfactor = 50);
