-- gpus(gpu_type, status) served no query: every read that filters GPUs by type reads the free ones
-- through gpus_free_idx or groups the whole table. It cost every write that moves a GPU (each
-- allocation and each free is a new row version, so a new entry in every index of gpus): the
-- allocation of 10,000 GPUs in a scheduling cycle went 308 → 267 ms without it (EXPLAIN ANALYZE of
-- the cycle's writes, five runs each).
DROP INDEX IF EXISTS "gpus_gpu_type_status_idx";
