"""A long document's chunks on its job record: who fans it out (or submits it whole to the VL
endpoint), how far each chunk has read, which chunks are counted, and who merges them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from idp.contract.job_record import JobRecord
from idp.jobstore.job_table import WHILE_ACTIVE, JobTable


class ChunkBookkeeping(JobTable):
    """The fan-out and fan-in counters of a job; every write is refused once the job ended."""

    def start_chunks(
        self,
        job_id: str,
        *,
        pages_total: int,
        chunks_total: int,
        chunk_pages: int,
        invocation_id: str,
    ) -> bool:
        """Claim a job's fan-out and record its totals (counters start at 0).

        Only one invocation fans a job out: its retries (same request id) may redo it, a
        duplicate delivery of the job's event (another invocation) gets False.
        """
        return self._update(
            job_id,
            "SET fan_out_invocation = :inv, "
            "pages_total = :pages, chunks_total = :chunks, chunk_pages = :size, "
            "chunks_done = if_not_exists(chunks_done, :zero), "
            "pages_done = if_not_exists(pages_done, :zero), "
            "page_progress = if_not_exists(page_progress, :empty), updated_at = :now",
            {
                ":pages": pages_total,
                ":chunks": chunks_total,
                ":size": chunk_pages,
                ":zero": 0,
                ":empty": {},
                ":inv": invocation_id,
            },
            condition=(
                f"{WHILE_ACTIVE} AND "
                "(attribute_not_exists(fan_out_invocation) OR fan_out_invocation = :inv)"
            ),
        )

    def claim_submission(self, job_id: str, *, invocation_id: str) -> bool:
        """Take the right to submit a whole document to the VL endpoint.

        One invocation submits: its retries (same request id) may submit again, a duplicate
        delivery of the job's event (another invocation) gets False.
        """
        return self._update(
            job_id,
            "SET submit_invocation = :inv, updated_at = :now",
            {":inv": invocation_id},
            condition=(
                f"{WHILE_ACTIVE} AND "
                "(attribute_not_exists(submit_invocation) OR submit_invocation = :inv)"
            ),
        )

    def record_fan_out(self, job_id: str, *, timings_ms: Mapping[str, float]) -> bool:
        """What splitting and dispatching the chunks took (the merge adds it to the result)."""
        return self._update(
            job_id,
            "SET fan_out_timings_ms = :timings, updated_at = :now",
            {":timings": dict(timings_ms)},
            condition=WHILE_ACTIVE,
        )

    def record_progress(self, job_id: str, *, chunk_index: int, pages_read: int) -> bool:
        """How many pages of one chunk are OCR'd so far (advisory: for progress bars only)."""
        return self._update(
            job_id,
            "SET page_progress.#chunk = :read, updated_at = :now",
            {":read": pages_read},
            condition=f"{WHILE_ACTIVE} AND attribute_exists(page_progress)",
            extra_names={"#chunk": str(chunk_index)},
        )

    def commit_chunk(self, job_id: str, *, chunk_index: int, pages: int) -> JobRecord | None:
        """Count a finished chunk once: None when it was counted before or the job has ended.

        The chunk's index joins the `chunks_committed` set in the same conditional write that
        adds to `chunks_done` and `pages_done`, so a duplicate or retried delivery of a chunk
        never counts twice. Returns the record as it is after this write.
        """
        record = self._updated_record(
            job_id,
            "ADD chunks_committed :index_set, chunks_done :one, pages_done :pages "
            "SET page_progress.#chunk = :pages, updated_at = :now",
            {":index_set": {chunk_index}, ":index": chunk_index, ":one": 1, ":pages": pages},
            condition=f"{WHILE_ACTIVE} AND NOT contains(chunks_committed, :index)",
            extra_names={"#chunk": str(chunk_index)},
            return_record=True,
        )
        return cast("JobRecord | None", record)

    def claim_merge(self, job_id: str, *, invocation_id: str, lease_seconds: float) -> bool:
        """Take the right to merge a job whose chunks are all counted; one merger at a time.

        A retry of the same invocation (same request id) takes it back at once, so a merge that
        crashed is redone; another invocation waits until the holder's lease has run out.
        """
        return self._update(
            job_id,
            "SET merge_invocation = :inv, merge_lease_until = :until, merge_started_at = :now, "
            "updated_at = :now",
            {":inv": invocation_id, **self._lease(lease_seconds)},
            condition=(
                f"{WHILE_ACTIVE} AND chunks_done = chunks_total AND "
                "(attribute_not_exists(merge_invocation) OR merge_invocation = :inv OR "
                "merge_lease_until < :now)"
            ),
        )
