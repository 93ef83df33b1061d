"""Office files the tests need beyond the real samples (devkit.office_samples): the samples made
hostile (encrypted, truncated, unreadable, a ZIP bomb), a document slow to convert, documents
that link content from elsewhere, and the legacy formats LibreOffice writes from a real sample."""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import docx
import openpyxl

from devkit.office_samples import sample_bytes

ZIP_BOMB_BYTES = 1100 * 1024 * 1024  # over the converter's 1 GiB unpacked limit


def encrypted_docx(password: str = "secret") -> bytes:
    """A real DOCX sample encrypted with a password, as Word saves it (an OLE2 file holding the
    EncryptedPackage), by msoffcrypto-tool."""
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(sample_bytes("docx-table"))).encrypt(password, out)
    return out.getvalue()


def truncated_docx() -> bytes:
    """A real DOCX sample cut in half (its ZIP central directory lost)."""
    data = sample_bytes("docx-table")
    return data[: len(data) // 2]


def unreadable_docx() -> bytes:
    """A whole DOCX package whose document part is not XML: LibreOffice cannot load it."""
    source = zipfile.ZipFile(io.BytesIO(sample_bytes("docx-table")))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                data = b"\x00\x01 not a document " * 100
            package.writestr(info, data)
    return out.getvalue()


def zip_bomb_docx(unpacked: int = ZIP_BOMB_BYTES) -> bytes:
    """A DOCX package whose document part inflates to `unpacked` bytes of zeros (about 1 MB
    packed per GB): a ZIP bomb in an OOXML container."""
    source = zipfile.ZipFile(io.BytesIO(sample_bytes("docx-table")))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for info in source.infolist():
            if info.filename != "word/document.xml":
                package.writestr(info, source.read(info))
        with package.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"\0" * (1024 * 1024)
            for _ in range(unpacked // len(block)):
                part.write(block)
    return out.getvalue()


def lying_zip_bomb_docx(unpacked: int = 64 * 1024 * 1024) -> bytes:
    """A DOCX whose document part declares 1 KB but inflates to `unpacked` bytes."""
    data = bytearray(zip_bomb_docx(unpacked))
    name = b"word/document.xml"
    # The part's central-directory entry: signature, then its uncompressed size at offset 24.
    entry = data.rfind(b"PK\x01\x02", 0, data.rfind(name))
    if data[entry + 24 : entry + 28] != b"\xff\xff\xff\xff":
        data[entry + 24 : entry + 28] = (1024).to_bytes(4, "little")
    return bytes(data)


def encrypted_odt() -> bytes:
    """An ODT package whose manifest lists its content as encrypted (what a password sets)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr(zipfile.ZipInfo("mimetype"), b"application/vnd.oasis.opendocument.text")
        package.writestr(
            "META-INF/manifest.xml",
            b'<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:'
            b'manifest:1.0"><manifest:file-entry manifest:full-path="content.xml">'
            b'<manifest:encryption-data manifest:checksum-type="SHA1/1K"/>'
            b"</manifest:file-entry></manifest:manifest>",
        )
        package.writestr("content.xml", zlib.compress(b"ciphertext" * 50))
    return out.getvalue()


def slow_docx(paragraphs: int = 20_000) -> bytes:
    """A long plain DOCX (about 1,700 pages) that takes LibreOffice tens of seconds to lay out."""
    document = docx.Document()
    line = "lorem ipsum dolor sit amet consectetur " * 6
    for number in range(paragraphs):
        document.add_paragraph(f"Paragraph {number}: {line}")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def untrusted_odt(*, image_url: str, linked_file: Path, macro_marker: Path) -> bytes:
    """An ODT that asks for more than its own content: a picture linked from `image_url` (shown
    on load), a section linked to `linked_file` (its cached text stored beside the link), and a
    Basic macro bound to the document's load event that would write `macro_marker`."""
    content = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
 xmlns:xlink="http://www.w3.org/1999/xlink"
 xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0" office:version="1.2">
<office:scripts><office:event-listeners>
<script:event-listener script:language="ooo:script" script:event-name="dom:load"
 xlink:type="simple"
 xlink:href="vnd.sun.star.script:Standard.Module1.Main?language=Basic&amp;location=document"/>
</office:event-listeners></office:scripts>
<office:body><office:text>
<text:p>Visible text of the document.</text:p>
<text:p><draw:frame draw:name="picture" svg:width="2cm" svg:height="2cm"><draw:image
 xlink:href="{image_url}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>
</draw:frame></text:p>
<text:section text:name="Linked"><text:section-source xlink:href="{linked_file.as_uri()}"
 xlink:type="simple" xlink:show="embed"/><text:p>Cached section text.</text:p></text:section>
</office:text></office:body></office:document-content>"""
    module = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "module.dtd">
<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Module1"
 script:language="StarBasic">Sub Main
  Open "{macro_marker}" For Output As #1
  Print #1, "the macro ran"
  Close #1
End Sub
</script:module>"""
    library = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE library:library PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "library.dtd">
<library:library xmlns:library="http://openoffice.org/2000/library" library:name="Standard"
 library:readonly="false" library:passwordprotected="false">
 <library:element library:name="Module1"/>
</library:library>"""
    libraries = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE library:libraries PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN"
 "libraries.dtd">
<library:libraries xmlns:library="http://openoffice.org/2000/library"
 xmlns:xlink="http://www.w3.org/1999/xlink">
 <library:library library:name="Standard" library:link="false"/>
</library:libraries>"""
    parts = {
        "content.xml": content,
        "Basic/script-lc.xml": libraries,
        "Basic/Standard/script-lb.xml": library,
        "Basic/Standard/Module1.xml": module,
    }
    entries = "".join(
        f'<manifest:file-entry manifest:full-path="{name}" manifest:media-type="text/xml"/>'
        for name in parts
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:'
        'names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry'
        ' manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>'
        f"{entries}</manifest:manifest>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        for name, text in parts.items():
            package.writestr(name, text)
        package.writestr("META-INF/manifest.xml", manifest)
    return out.getvalue()


_RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _repacked(data: bytes, edit: Callable[[dict[str, bytes]], None]) -> bytes:
    """An OOXML package with its parts changed by `edit` (a dict of name → bytes)."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        parts = {name: package.read(name) for name in package.namelist()}
    edit(parts)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, body in parts.items():
            package.writestr(name, body)
    return out.getvalue()


def docx_with_linked_picture(image_url: str) -> bytes:
    """A DOCX whose picture is not stored but linked from `image_url` (an external image
    relationship, `a:blip r:link`): Word and LibreOffice fetch it to show it."""
    document = docx.Document()
    document.add_paragraph("Visible text of the document.")
    out = io.BytesIO()
    document.save(out)
    picture = (
        '<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/'
        'drawingml/2006/wordprocessingDrawing"><wp:extent cx="914400" cy="914400"/>'
        '<wp:docPr id="1" name="Picture 1"/><a:graphic xmlns:a="http://schemas.openxmlformats'
        '.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/'
        'drawingml/2006/picture"><pic:pic xmlns:pic="http://schemas.openxmlformats.org/'
        'drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="0" name="linked.png"/>'
        f'<pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip xmlns:r="{_RELATIONSHIPS}" '
        'r:link="rIdLinked"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr>'
        '<a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/></a:xfrm><a:prstGeom '
        'prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic>'
        "</wp:inline></w:drawing></w:r></w:p>"
    )
    link = (
        f'<Relationship Id="rIdLinked" Type="{_RELATIONSHIPS}/image" Target="{image_url}" '
        'TargetMode="External"/></Relationships>'
    )

    def edit(parts: dict[str, bytes]) -> None:
        body = parts["word/document.xml"].decode()
        parts["word/document.xml"] = body.replace("<w:sectPr", picture + "<w:sectPr", 1).encode()
        rels = parts["word/_rels/document.xml.rels"].decode()
        parts["word/_rels/document.xml.rels"] = rels.replace("</Relationships>", link).encode()

    return _repacked(out.getvalue(), edit)


def xlsx_with_external_link(target: str, cached: str) -> bytes:
    """An XLSX whose cell A2 is a formula on another workbook at `target` (an external link
    part), with `cached` stored as its value and as the link's cached cell."""
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "Visible cell"
    out = io.BytesIO()
    workbook.save(out)
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    external = (
        f'<?xml version="1.0" encoding="UTF-8"?><externalLink xmlns="{main}" '
        f'xmlns:r="{_RELATIONSHIPS}"><externalBook r:id="rId1"><sheetNames><sheetName '
        'val="Sheet1"/></sheetNames><sheetDataSet><sheetData sheetId="0"><row r="1"><cell '
        f'r="A1" t="str"><v>{cached}</v></cell></row></sheetData></sheetDataSet></externalBook>'
        "</externalLink>"
    )
    package_rels = "http://schemas.openxmlformats.org/package/2006/relationships"

    def edit(parts: dict[str, bytes]) -> None:
        sheet = parts["xl/worksheets/sheet1.xml"].decode()
        cell = f'<row r="2"><c r="A2" t="str"><f>[1]Sheet1!A1</f><v>{cached}</v></c></row>'
        parts["xl/worksheets/sheet1.xml"] = sheet.replace(
            "</sheetData>", cell + "</sheetData>"
        ).encode()
        parts["xl/externalLinks/externalLink1.xml"] = external.encode()
        parts["xl/externalLinks/_rels/externalLink1.xml.rels"] = (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{package_rels}">'
            f'<Relationship Id="rId1" Type="{_RELATIONSHIPS}/externalLinkPath" '
            f'Target="{target}" TargetMode="External"/></Relationships>'
        ).encode()
        book = parts["xl/workbook.xml"].decode()
        reference = (
            f'<externalReferences><externalReference xmlns:r="{_RELATIONSHIPS}" '
            'r:id="rIdExternal"/></externalReferences>'
        )
        parts["xl/workbook.xml"] = book.replace("</sheets>", "</sheets>" + reference).encode()
        rels = parts["xl/_rels/workbook.xml.rels"].decode()
        parts["xl/_rels/workbook.xml.rels"] = rels.replace(
            "</Relationships>",
            f'<Relationship Id="rIdExternal" Type="{_RELATIONSHIPS}/externalLink" '
            'Target="externalLinks/externalLink1.xml"/></Relationships>',
        ).encode()
        types = parts["[Content_Types].xml"].decode()
        parts["[Content_Types].xml"] = types.replace(
            "</Types>",
            '<Override PartName="/xl/externalLinks/externalLink1.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.externalLink+xml"/></Types>',
        ).encode()

    return _repacked(out.getvalue(), edit)


def docx_with_fields(*fields: tuple[str, str]) -> bytes:
    """A DOCX holding each (instruction, cached result) as a field, e.g. INCLUDETEXT or
    INCLUDEPICTURE: Word updates such a field from its target; the file stores its last result."""
    document = docx.Document()
    document.add_paragraph("Visible text of the document.")
    out = io.BytesIO()
    document.save(out)
    runs = "".join(
        '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText '
        f'xml:space="preserve"> {instruction} </w:instrText></w:r><w:r><w:fldChar '
        f'w:fldCharType="separate"/></w:r><w:r><w:t>{cached}</w:t></w:r><w:r><w:fldChar '
        'w:fldCharType="end"/></w:r></w:p>'
        for instruction, cached in fields
    )

    def edit(parts: dict[str, bytes]) -> None:
        body = parts["word/document.xml"].decode()
        parts["word/document.xml"] = body.replace("<w:sectPr", runs + "<w:sectPr", 1).encode()

    return _repacked(out.getvalue(), edit)


def rtf_with_fields(*fields: tuple[str, str]) -> bytes:
    """An RTF holding each (instruction, cached result) as a field."""
    body = r"{\rtf1\ansi\deff0{\fonttbl{\f0 Arial;}}\f0 Visible text of the document.\par "
    for instruction, cached in fields:
        escaped = instruction.replace("\\", "\\\\")
        body += r"{\field{\*\fldinst{ " + escaped + r" }}{\fldrslt{" + cached + r"}}}\par "
    return (body + "}").encode()
