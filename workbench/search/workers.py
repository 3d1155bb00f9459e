"""Where the search's work runs: in this process, or on `dask.distributed`
workers (a LocalCluster of single-threaded processes by default, or the
cluster behind a `Client` the caller passes)."""

from __future__ import annotations

import concurrent.futures as cf
import logging

from ..errors import WorkbenchError


class InlineExecutor:
    """Runs each task at once in the calling process."""

    def __init__(self):
        self.workers = 1

    def submit(self, fn, task):
        fut: cf.Future = cf.Future()
        try:
            fut.set_result(fn(task))
        except Exception as exc:  # noqa: BLE001 - the search records it (Search._absorb)
            fut.set_exception(exc)
        return fut

    @staticmethod
    def wait_any(futures) -> list:
        return [f for f in futures if f.done()]

    def close(self) -> None:
        pass


class DaskExecutor:
    """Tasks on dask.distributed workers. Without a client, starts a
    LocalCluster of `workers` processes with one thread each (evaluations
    measure time: two in one process would share a core)."""

    def __init__(self, client=None, workers: int = 2):
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise WorkbenchError("many workers need dask.distributed: pip install distributed"
                                 ) from exc
        self._own = client is None
        if client is None:
            self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                         processes=True, dashboard_address=None,
                                         silence_logs=logging.ERROR)
            client = Client(self._cluster)
        self.client = client
        self.workers = max(1, len(client.scheduler_info().get("workers", {})) or workers)

    def submit(self, fn, task):
        return self.client.submit(fn, task, pure=False)

    @staticmethod
    def wait_any(futures) -> list:
        from distributed import wait
        return list(wait(futures, return_when="FIRST_COMPLETED").done)

    def close(self) -> None:
        """Close the client and our cluster. Shutting workers down while
        tasks were cancelled makes dask log connection errors
        (`CommClosedError`) that say nothing about the search: they are
        silenced while closing, and only then."""
        if not self._own:
            return
        quiet = [logging.getLogger(n) for n in _DASK_LOGGERS]
        levels = [q.level for q in quiet]
        for q in quiet:
            q.setLevel(logging.CRITICAL)
        try:
            self.client.close()
            self._cluster.close()
        finally:
            for q, level in zip(quiet, levels, strict=True):
                q.setLevel(level)


_DASK_LOGGERS = ("distributed", "distributed.comm", "distributed.core", "distributed.worker",
                 "distributed.nanny", "distributed.scheduler", "distributed.client",
                 "distributed.batched", "tornado.application", "asyncio")


def executor(workers: int | None = None, client=None):
    """`client` → its cluster; `workers` ≥ 1 → a LocalCluster; 0/None → inline."""
    if client is not None:
        return DaskExecutor(client=client)
    if workers:
        if not isinstance(workers, int) or workers < 0:
            raise WorkbenchError(f"workers must be a non-negative integer, got {workers!r}")
        return DaskExecutor(workers=workers)
    return InlineExecutor()


__all__ = ["DaskExecutor", "InlineExecutor", "executor"]
