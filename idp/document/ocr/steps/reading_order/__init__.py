"""Reading order: a page's lines grouped into blocks and put in the order a person reads them
(order.py tells how)."""

from idp.document.ocr.steps.reading_order.geometry import DEFAULT_THRESHOLDS, LayoutThresholds
from idp.document.ocr.steps.reading_order.order import ReadingOrder, read_in_order

__all__ = ["DEFAULT_THRESHOLDS", "LayoutThresholds", "ReadingOrder", "read_in_order"]
