"""The engine seam: what the processor, the VL server and the page steps need from an OCR
engine."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from idp.contract.errors import ENGINE_FAULTS, EngineFailure
from idp.contract.results import (
    Block,
    EngineInfo,
    Line,
    OrientationCheck,
    Quad,
    ReviewReason,
    Rotation,
    Stage,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from idp.document.decode import PageImage

    Pixels = npt.NDArray[np.uint8]


@dataclass
class PageContent:
    """What an engine recognized on one page, in the page's pixel space."""

    lines: list[Line] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    markdown: str | None = None
    # Degrees the page was turned counter-clockwise to read it (steps/orientation.py), and what
    # finding that out cost; 0 where no orientation step ran.
    rotation: Rotation = 0
    orientation_ms: float = 0.0
    orientation: OrientationCheck | None = None  # the decision and its evidence, where checked
    dropped_lines: int = 0  # detected lines that read as nothing
    # The scale the text detector saw the page at (its tiles', for a tall page: steps.tiles);
    # None where the engine does not say.
    detector_scale: float | None = None
    # A layout model's: the regions it found (None where no layout model ran), and the stages
    # of its pipeline as they ran.
    layout_regions: int | None = None
    stages: list[Stage] = field(default_factory=list)
    read_from_layer: bool = False  # its text is a born-digital page's own (steps.born_digital)
    doubts: list[ReviewReason] = field(default_factory=list)  # what a step found doubtful


class OcrEngine(Protocol):
    """A ready engine for one model + language. Built once, reused across warm invocations."""

    @property
    def info(self) -> EngineInfo: ...

    def recognize(self, page: PageImage) -> PageContent:
        """Recognize one page. Raises EngineFailure for an engine error on this input."""
        ...


@runtime_checkable
class MultiPageEngine(OcrEngine, Protocol):
    """An engine that recognizes several pages in one call, so their work overlaps (the VL
    engine's regions of all pages share one VLM request queue)."""

    def recognize_pages(self, pages: Sequence[PageImage]) -> list[PageContent]: ...


@runtime_checkable
class TextDetectorEngine(OcrEngine, Protocol):
    """An engine whose text detector sees a page scaled down to at most `detector_side` pixels
    on its longest side: the page path reads a tall page for it in tiles (steps.tiles)."""

    detector_side: int


@runtime_checkable
class LineReader(Protocol):
    """An engine that can read line images on their own (its recognizer without detection): the
    steps read again with it what the detector turned, joined or passed over."""

    def read_lines(self, lines: Sequence[Pixels]) -> list[tuple[str, float]]:
        """Text and confidence of each RGB line image."""
        ...


@dataclass(frozen=True)
class LayoutRegion:
    """A region a layout model found on a page: its label (PP-DocLayout's names), its box in
    the page's pixels, and the model's score."""

    label: str
    box: Quad
    score: float


@runtime_checkable
class LayoutEngine(OcrEngine, Protocol):
    """An engine whose layout model and text reader can run on their own: the page path reads a
    born-digital page's text from its PDF and asks the engine only for its regions, and for the
    text of a region the PDF holds none of (steps.born_digital)."""

    def detect_layout(self, page: PageImage) -> list[LayoutRegion]:
        """The page's regions, as the engine's layout model finds them."""
        ...

    def read_region(self, page: PageImage, box: Quad) -> list[Line]:
        """The text lines in a box of the page (detection and recognition), in page pixels."""
        ...

    @property
    def layout_stages(self) -> list[Stage]:
        """The stages of the engine's own pipeline that such a page still runs (its layout)."""
        ...

    @property
    def region_text_model(self) -> str | None:
        """The text models read_region reads with (detection + recognition), for the stages."""
        ...


@contextmanager
def failures_on_page(what: str, page: int) -> Iterator[None]:
    """An error `what` (a model, an engine) raises on a page becomes EngineFailure naming both;
    the faults a document cannot cause (ENGINE_FAULTS) pass unchanged."""
    try:
        yield
    except ENGINE_FAULTS:
        raise
    except Exception as exc:  # the libraries raise bare Exceptions on bad input
        raise EngineFailure(f"{what} failed on page {page}: {type(exc).__name__}: {exc}") from exc
