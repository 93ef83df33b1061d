"""Objects used in a `with` block, released however the block ends."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from types import TracebackType


class Closing(ABC):
    """`with thing:` gives the thing itself and calls `close()` when the block ends."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Service(Closing):
    """Started on entering a `with` block, stopped on leaving it — and when starting fails half
    way, so that nothing it had begun is left running."""

    @abstractmethod
    def start(self) -> object: ...

    @abstractmethod
    def stop(self) -> None: ...

    def close(self) -> None:
        self.stop()

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self
