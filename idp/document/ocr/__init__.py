"""OCR engines, model cache and the document pipeline shared by processor and VL server."""
