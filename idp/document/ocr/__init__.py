"""OCR of a document's pages, shaped like an OCR library:

pipeline.py  a document's bytes → its pages, each read by page.py
page.py      one page, step by step: orient → recognize (tall pages in tiles) → read again
             what the detector turned, joined or missed → split gutters → reading order →
             verdict → second read where doubtful
registry.py  the warm engines of a process
engine.py    the seam every engine implements, and what the steps ask of one
steps/       the engine-neutral steps (numpy only)
decoding/    the CTC decoding rules of text lines (numpy only), installed by paddle/
paddle/      PaddleOCR's engines and classifiers: the only code that imports the libraries
models/      the model catalogue, the language → model choice and the model cache
"""
