"""A large document in chunks, in one place: the plan and work layout (plan.py), counting each
chunk once and claiming the merge (fan_in.py), and the streaming merge (merge.py). The
processor's side is ocr_processor_image/chunked_job.py; the counters live in the job store
(idp.jobstore.chunk_bookkeeping)."""
