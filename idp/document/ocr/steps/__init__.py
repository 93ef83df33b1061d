"""The engine-neutral steps of reading a page (numpy only): orientation, geometry, gutter split,
reading order and the page's verdict. idp.document.ocr.page runs them in order."""
