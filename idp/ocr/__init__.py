"""OCR engines, the model cache and the document → result pipeline shared by processor and VL server."""
