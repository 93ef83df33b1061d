"""The SageMaker serving contract: GET /ping and POST /invocations on port 8080.

One process, one event loop (uvicorn): the engines and the vLLM server are loaded once and
shared, which several worker processes could not do on one GPU. Blocking work (S3, decoding,
inference) runs in threads, at most VL_MAX_CONCURRENT_REQUESTS at a time; the engines release
the GIL in native code and in network waits on vLLM, so requests really overlap.

    serve            # what SageMaker runs: `docker run <image> serve`
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from idp.aws.clients import client
from idp.contract.errors import (
    EngineFailure,
    InvalidMessage,
    JobError,
    ModelUnavailable,
    UnsupportedLanguage,
    UnsupportedModel,
)
from idp.contract.results import OcrResult
from idp.contract.timestamps import ms
from sagemaker_container.engines import (
    EngineBusy,
    LoadedEngines,
    SubstituteFactory,
    build_engines,
    warm_up,
)
from sagemaker_container.service import parse_manifest, run_job
from sagemaker_container.settings import ServerSettings, SettingsError
from sagemaker_container.vlm_server import VlmServerError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger("sagemaker_container")

JSON_CONTENT_TYPE: Final = "application/json"


class ServerError(StrEnum):
    """Codes of the errors the server itself answers with (a document's own are JobError's)."""

    UNSUPPORTED_CONTENT_TYPE = "UNSUPPORTED_CONTENT_TYPE"
    NOT_READY = "NOT_READY"
    STARTUP_FAILED = "STARTUP_FAILED"
    VLM_SERVER_FAILED = "VLM_SERVER_FAILED"
    INFERENCE_TIMEOUT = "INFERENCE_TIMEOUT"
    INTERNAL_ERROR = "INTERNAL_ERROR"


# A malformed manifest is the caller's fault (400); everything else a JobError names is about
# the document (422). Failures of our own making are 5xx.
_MANIFEST_ERRORS: Final = (InvalidMessage, UnsupportedModel, UnsupportedLanguage)


class Phase(StrEnum):
    STARTING = "starting"
    RESOLVING_WEIGHTS = "resolving-weights"
    STARTING_VLM_SERVER = "starting-vlm-server"
    BUILDING_ENGINE = "building-engine"
    WARMING_UP = "warming-up"
    READY = "ready"
    FAILED = "failed"


class ServerState:
    """The /ping state machine: STARTING → … → WARMING_UP → READY, or FAILED with an error."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.phase = Phase.STARTING
        self.error: dict[str, str] | None = None
        self.engines: LoadedEngines | None = None
        self.started_at = time.monotonic()
        self.load_ms: float | None = None
        self.warmup_ms: dict[str, float] = {}

    def set_phase(self, phase: str) -> None:
        with self._lock:
            if self.phase is not Phase.FAILED:
                self.phase = Phase(phase)
        logger.info("start-up phase: %s", phase)

    def ready_with(self, engines: LoadedEngines, warmup_ms: dict[str, float]) -> None:
        with self._lock:
            self.engines = engines
            self.warmup_ms = warmup_ms
            self.load_ms = ms(time.monotonic() - self.started_at)
            self.phase = Phase.READY
        logger.info("ready: %s in %.0f ms", engines.info.name, self.load_ms)

    def fail(self, code: str, message: str) -> None:
        with self._lock:
            self.phase = Phase.FAILED
            self.error = {"code": code, "message": message}
        logger.error("start-up failed [%s]: %s", code, message)

    @property
    def ready(self) -> bool:
        engines = self.engines
        return self.phase is Phase.READY and engines is not None and engines.healthy

    def describe(self) -> dict[str, Any]:
        engines = self.engines
        body: dict[str, Any] = {"state": self.phase.value}
        if self.error is not None:
            body["error"] = self.error
        if engines is not None:
            body["engine"] = engines.info.model_dump()
            body["engine_instances"] = engines.pool.size
            if engines.supervisor is not None:
                body["vlm_server"] = {
                    "state": engines.supervisor.state.value,
                    "restarts": engines.supervisor.restarts,
                }
            if self.phase is Phase.READY and not engines.healthy:
                body["state"] = "degraded"
        if self.load_ms is not None:
            body["load_ms"] = self.load_ms
        return body


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class HttpError(Exception):
    """An error answer: the JSON error body (stable code and message) with its HTTP status."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.response = error_response(status, code, message)


def status_for(error: JobError) -> int:
    if isinstance(error, _MANIFEST_ERRORS):
        return 400
    if isinstance(error, ModelUnavailable):
        return 503
    if isinstance(error, EngineFailure):
        return 500
    return 422


def load(
    state: ServerState,
    settings: ServerSettings,
    *,
    s3_factory: Callable[[], S3Client],
    substitute_factory: SubstituteFactory | None = None,
) -> None:
    """Build and warm the engines; runs in a background thread so /ping can answer."""
    engines: LoadedEngines | None = None
    try:
        s3 = s3_factory() if settings.model_cache_bucket else None
        engines = build_engines(
            settings, s3=s3, report=state.set_phase, substitute_factory=substitute_factory
        )
        warmup_ms: dict[str, float] = {}
        if settings.warmup:
            state.set_phase(Phase.WARMING_UP)
            warmup_ms = warm_up(engines)
        state.ready_with(engines, warmup_ms)
    except JobError as exc:
        state.fail(exc.code, exc.message)
    except VlmServerError as exc:
        state.fail(ServerError.VLM_SERVER_FAILED, str(exc))
    except Exception as exc:  # start-up must report, not die silently: /ping carries it
        logger.exception("start-up failed")
        state.fail(ServerError.STARTUP_FAILED, f"{type(exc).__name__}: {exc}")
    if state.phase is Phase.FAILED and engines is not None:
        engines.close()


class _Clients:
    """boto3 clients, created once on first use (honours AWS_ENDPOINT_URL for emulators), with
    the shared client settings."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._s3: S3Client | None = None

    def s3(self) -> S3Client:
        with self._lock:
            if self._s3 is None:
                self._s3 = client("s3")
            return self._s3


def create_app(
    settings: ServerSettings,
    *,
    s3_factory: Callable[[], S3Client] | None = None,
    substitute_factory: SubstituteFactory | None = None,
) -> Starlette:
    state = ServerState()
    clients = _Clients()
    get_s3 = s3_factory or clients.s3
    limiter = anyio.CapacityLimiter(settings.max_concurrent_requests)

    async def ping(request: Request) -> Response:
        return JSONResponse(state.describe(), status_code=200 if state.ready else 503)

    async def invocations(request: Request) -> Response:
        try:
            result = await invoke(request)
        except HttpError as exc:
            return exc.response
        return Response(result.model_dump_json(), media_type=JSON_CONTENT_TYPE)

    async def invoke(request: Request) -> OcrResult:
        content_type = request.headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != JSON_CONTENT_TYPE:
            raise HttpError(
                415,
                ServerError.UNSUPPORTED_CONTENT_TYPE,
                f"content type {content_type or '(none)'!r} is not supported; send the job "
                f"manifest as {JSON_CONTENT_TYPE}",
            )
        try:
            job = parse_manifest(await request.body())
        except JobError as exc:
            raise HttpError(status_for(exc), exc.code, exc.message) from None
        engines = state.engines
        if not state.ready or engines is None:
            error = state.error or {
                "code": ServerError.NOT_READY,
                "message": f"engine {state.phase.value}",
            }
            raise HttpError(503, error["code"], error["message"])
        work = partial(
            run_job,
            job,
            engines=engines,
            s3=get_s3(),
            settings=settings,
            lease_timeout_s=settings.request_timeout_s,
        )
        try:
            with anyio.fail_after(settings.request_timeout_s):
                result = await anyio.to_thread.run_sync(
                    work, limiter=limiter, abandon_on_cancel=True
                )
        except TimeoutError:
            logger.error("job %s: no result within %.0f s", job.job_id, settings.request_timeout_s)
            raise HttpError(
                504,
                ServerError.INFERENCE_TIMEOUT,
                f"no result within {settings.request_timeout_s:.0f} s",
            ) from None
        except EngineBusy as exc:
            raise HttpError(503, ServerError.NOT_READY, str(exc)) from None
        except JobError as exc:
            logger.info("job %s failed [%s]: %s", job.job_id, exc.code, exc.message)
            raise HttpError(status_for(exc), exc.code, exc.message) from None
        except Exception as exc:  # a bug or an AWS fault: reported as 500, logged in full
            logger.exception("job %s: unexpected failure", job.job_id)
            raise HttpError(
                500, ServerError.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
            ) from None
        logger.info(
            "job %s: %d page(s) in %.0f ms",
            job.job_id,
            len(result.pages),
            result.timings_ms.get("total", 0.0),
        )
        return result

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        loader = threading.Thread(
            target=load,
            args=(state, settings),
            kwargs={"s3_factory": get_s3, "substitute_factory": substitute_factory},
            name="engine-loader",
            daemon=True,
        )
        loader.start()
        try:
            yield
        finally:
            engines = state.engines
            if engines is not None:
                engines.close()

    app = Starlette(
        routes=[
            Route("/ping", ping, methods=["GET"]),
            Route("/invocations", invocations, methods=["POST"]),
        ],
        lifespan=lifespan,
    )
    app.state.server_state = state
    return app


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="serve", description=__doc__.splitlines()[0])
    parser.add_argument(
        "command", nargs="?", default="serve", choices=["serve"], help="SageMaker passes 'serve'"
    )
    parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stdout,
    )
    try:
        settings = ServerSettings.from_env()
    except SettingsError as exc:
        logger.error("invalid settings: %s", exc)
        raise SystemExit(2) from None
    import uvicorn

    logger.info(
        "serving %s on %s:%d (%d concurrent requests, %d engine instance(s))",
        settings.engine,
        settings.host,
        settings.port,
        settings.max_concurrent_requests,
        settings.engine_instances,
    )
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        workers=1,
        log_level="info",
        access_log=False,
        # SageMaker's front end keeps connections open; outlive its idle timeout.
        timeout_keep_alive=75,
    )


if __name__ == "__main__":
    main()
