"""Searchable PDF output (result.pdf): the input's pages with an invisible, selectable text layer.

`write_searchable_pdf` builds it from the input and its recognized pages; `concatenate_pdfs`
joins the parts of a chunked document, reading one part at a time. Both write to a file object:
where the file goes (S3, the chunks' work layout) is the processor's business.
"""

from idp.document.searchable_pdf.document import concatenate_pdfs, write_searchable_pdf

__all__ = ["concatenate_pdfs", "write_searchable_pdf"]
