"""Bytes → pages → OCR → result.pdf, with no S3 work layout.

Media types and decoding, the OCR engines (`ocr/`), PDF text layers (`text_layer/`) and the
searchable PDF (`searchable_pdf/`).
"""
