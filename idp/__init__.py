"""Shared core of the document-OCR pipeline: names, job model, status store, result schema."""
