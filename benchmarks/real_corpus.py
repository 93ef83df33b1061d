"""The real-document corpus of benchmarks/real_documents.py: what is fetched, from where, and how
each chosen page becomes the input a user would upload, with its reference text.

Nothing here is vendored. Documents come from package registries at benchmark time, pinned by
version and sha256 (archive and member): test resources of PDF/OCR projects' PyPI sdists and
documentation PDFs of Debian packages; each file's licence is recorded with it. Pages are:
- real scans, given to the pipeline as they are published (the PDF page, or the image file);
  their reference text is typed below (transcribed by eye; decorative art left out, line-end
  hyphens kept as printed); three pages without one serve the orientation and verdict checks;
- born-digital pages rendered as damaged greyscale scans (200-300 dpi, skew <= 0.5°, blur,
  noise, JPEG; one turned sideways), with their own text layer as the reference (poppler's
  `pdftotext -layout`, region by region in reading order where the page has columns).
Everything fetched or rendered is cached under CACHE_DIR (git-ignored).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from PIL import Image

REPO_ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = REPO_ROOT / ".cache" / "real_documents"

Registry = Literal["pypi", "debian", "debian-source"]
# Where Debian publishes its source packages' upstream tarballs (the archive apt's deb-src
# lines name): pool/<component>/<first letter, or lib + one>/<source package>/<file>.
DEBIAN_POOL = "http://deb.debian.org/debian/pool/main"
PYPI_SIMPLE = "https://pypi.org/simple"
Region = tuple[float, float, float, float]  # x, y, width, height in PDF points of the shown page


class CorpusError(RuntimeError):
    """A download, a pinned checksum or a conversion did not give the pinned document."""


@dataclass(frozen=True)
class Archive:
    """A package as its registry publishes it: a PyPI sdist, a Debian .deb or a Debian source
    package's upstream tarball (its .orig.tar.*)."""

    registry: Registry
    name: str
    version: str
    file: str  # the archive's file name as the registry's client saves it
    sha256: str
    licence: str  # the package's licence, and what it says (or not) about the files used


@dataclass(frozen=True)
class Source:
    """One document inside an archive."""

    archive: str  # key of ARCHIVES
    member: str  # path inside the archive
    sha256: str  # of the member as stored
    licence: str  # of the document itself
    postscript_gz: bool = False  # a gzipped PostScript file, converted to PDF with ps2pdf


@dataclass(frozen=True)
class Damage:
    """How a born-digital page is turned into a plausible flatbed scan (seeded: reproducible)."""

    dpi: int
    angle: float  # skew, degrees counter-clockwise
    blur: float  # Gaussian radius, pixels
    noise: float  # standard deviation of grey-level noise
    jpeg_quality: int
    seed: int
    turn_cw: int = 0  # the sheet fed sideways: degrees clockwise


@dataclass(frozen=True)
class CorpusPage:
    """A page of the corpus, the kinds of difficulty it stands for and its reference text."""

    doc: str
    source: str  # key of SOURCES
    page: int  # 1-based page of the source document
    kinds: tuple[str, ...]
    what: str
    typed: str | None = None  # key of TYPED: the reference for a real scan
    # Reference from the source's own text layer: regions in reading order, () for the whole page.
    layer_regions: tuple[Region, ...] | None = None
    damage: Damage | None = None  # set for born-digital pages: rendered as a damaged scan
    rotation: int = 0  # degrees the page must be turned counter-clockwise to read it upright
    strip_leaders: bool = False  # dot leaders (". . . .") are layout, not text: not scored

    @property
    def id(self) -> str:
        return f"{self.doc}__p{self.page}"

    @property
    def born_digital(self) -> bool:
        return self.damage is not None

    @property
    def has_reference(self) -> bool:
        return self.typed is not None or self.layer_regions is not None


ARCHIVES: dict[str, Archive] = {
    "ocrmypdf": Archive(
        "pypi",
        "ocrmypdf",
        "17.13.0",
        "ocrmypdf-17.13.0.tar.gz",
        "151c35d810eb628fbc5cb9bbe80b834ecf094737efa0e7a2e9e1fac3c730ed49",
        "MPL-2.0 (code); tests/resources per REUSE.toml in the sdist",
    ),
    "pikepdf": Archive(
        "pypi",
        "pikepdf",
        "10.17.0",
        "pikepdf-10.17.0.tar.gz",
        "de4ccaae83628e86c1fd473b384c09c6ff1dd35a583a8dacbf61d2aa4bea843b",
        "MPL-2.0 (code); tests/resources per REUSE.toml in the sdist",
    ),
    "pypdf": Archive(
        "pypi",
        "pypdf",
        "7.1.0",
        "pypdf-7.1.0.tar.gz",
        "ca3fa902369e98a6d2cb7b56396de902b72ef9bb3c1e8706c1bfc7d8bd0cf0d7",
        "BSD-3-Clause (code); resources/ carry no licence statement",
    ),
    "pdfannots": Archive(
        "pypi",
        "pdfannots",
        "0.5",
        "pdfannots-0.5.tar.gz",
        "75da28053efa64980763b7b4891f14887d3d316f8273fcf4d02b593bbf57089c",
        "MIT (code); tests/*.pdf carry no licence statement",
    ),
    "tabula-py": Archive(
        "pypi",
        "tabula-py",
        "2.10.0",
        "tabula_py-2.10.0.tar.gz",
        "75968a83fe978e5d56ccf23f0f0255a459c256b7b52db7cabe5ac795bb3b12df",
        "MIT (code); tests/resources carry no licence statement",
    ),
    "asymptote-doc": Archive(
        "debian",
        "asymptote-doc",
        "2.85+ds-1",
        "asymptote-doc_2.85+ds-1_all.deb",
        "b2ae6e97c64ede66c1e41cc913f790b01188d198557203a2b3c500ba3495e6ca",
        "GPL-3+ (Debian copyright, Files: *)",
    ),
    "r-doc-pdf": Archive(
        "debian",
        "r-doc-pdf",
        "4.2.2.20221110-2",
        "r-doc-pdf_4.2.2.20221110-2_all.deb",
        "beb104ad5818d261f280a868294645ca31d7c63365f2c9a55aa3ca9aad5aa71d",
        "GPL-2 / GPL-3 (R); manuals: verbatim-copying permission notice",
    ),
    "gri-pdf-doc": Archive(
        "debian",
        "gri-pdf-doc",
        "2.12.27-1.1",
        "gri-pdf-doc_2.12.27-1.1_all.deb",
        "0873a873dbd41d1536c9f48388f4bf30ee0758309b0a597412860b865a187f92",
        "GPL-3+ (Gri and all its manuals, Debian copyright)",
    ),
}

_OCRMYPDF = "ocrmypdf-17.13.0/tests/resources/"
_PIKEPDF = "pikepdf-10.17.0/tests/resources/"
_LINN = "(C) 1985 Forat Electronics; GFDL-1.2-or-later or CC-BY-SA-3.0"

SOURCES: dict[str, Source] = {
    "2400dpi.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "2400dpi.pdf",
        "98cf83efd35673301dbfcbfa900e42a31f8ea90cb16ffd9b8be2aa28394ef142",
        "(C) 2005 Ellywa; GFDL-1.2-or-later or CC-BY-SA-1.0/2.0/2.5/3.0"
        " (Wikimedia Commons 'Triumph typewriter text Linzensoep')",
    ),
    "linn.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "linn.pdf",
        "e923f6e8e036185f8f2aae5f7fdeefd8ac658d627cebd4ebf630de4cbf0a2d64",
        _LINN + " (LinnSequencer brochure, 300 dpi)",
    ),
    "linn.png": Source(
        "ocrmypdf",
        _OCRMYPDF + "linn.png",
        "dcd90f08a6b8a733612f818330153636c13283dd548e2e092cad1fe628ec7bf3",
        _LINN,
    ),
    "skew.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "skew.pdf",
        "6be6b54d49df71351974774404e299b756d8d3cbeb2c4a31f15fae8dd983d72f",
        _LINN + " (linn.png, skewed via the CTM)",
    ),
    "cardinal.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "cardinal.pdf",
        "ebd7b2233aea5f320562df9635901bbd8e734cb42c85defa1059163d4b1d6ccb",
        _LINN + " (linn.png turned 0/90/180/270)",
    ),
    "c03-29.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "c03-29.pdf",
        "c2ff83af7d028c95209cc7eebdf80fd5bb4cd292973ed6601e4bab7d1929f201",
        "public domain (Project Gutenberg scan, Huckleberry Finn p. 29)",
    ),
    "graph.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "graph.pdf",
        "11fa2cef6845341795dc4103e68b31df5ff4fc72a7b7fa42904eb22b9bd70613",
        "(C) 2012 SmokeyJoe; GFDL-1.2-or-later or CC-BY-SA-3.0 (Wikimedia line graph)",
    ),
    "multipage.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "multipage.pdf",
        "07987c44650938fa8dcf08c0937691712fdd800669b4607c2c7e3fee21cb1f80",
        "public domain (REUSE.toml); pages 5-6: A Tale of Two Cities, ch. 1",
    ),
    "epson.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "epson.pdf",
        "3fce2d6e5baffec839ffc86b7c91903b139399392ea76a09bdfcca40cb8b5a4d",
        "CC-BY-SA-3.0 (Wikipedia 'Optical character recognition' printout, scanned on an Epson)",
    ),
    "acroform.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "acroform.pdf",
        "16f2b7b564587ce0c515c6b12252b94a0d62e2dec6e8b33a0cf7606328720509",
        "CC-BY-SA-4.0, (C) 2025 James R. Barlow (synthetic)",
    ),
    "francais.pdf": Source(
        "ocrmypdf",
        _OCRMYPDF + "francais.pdf",
        "600c27f8dd2ef085a94d3500f6ccdb3b37f4b89aa8ffdf9a00a06a1367887e8b",
        "CC-BY-SA-4.0, (C) 2025 James R. Barlow (synthetic)",
    ),
    "congress.pdf": Source(
        "pikepdf",
        _PIKEPDF + "congress.pdf",
        "aa56b73d2ca24841b9aab2d617f941579238ef5096ea4d65f2cd15e8ffaba502",
        "CC-PDDC (US Congressional Records, JPEG photo of an 1872 page)",
    ),
    "pike-graph.pdf": Source(
        "pikepdf",
        _PIKEPDF + "graph.pdf",
        "114da77332540aa4e3811c4245a57ec2c4f937349e6403c83a8bdbe854e73aa9",
        "CC-PDDC (Wikipedia File:Pandas_text_analysis.png, released to the public domain)",
    ),
    "form_210966.pdf": Source(
        "pikepdf",
        _PIKEPDF + "form_210966.pdf",
        "784040814eb4777eccb161755d436ccf70c0d285c7dbbfe0c800173806abc83a",
        "CC-PDDC (US VA Form 21-0966)",
    ),
    "form_dd0293.pdf": Source(
        "pikepdf",
        _PIKEPDF + "form_dd0293.pdf",
        "0691d01c9bf7f42263b24fa5577fc742a4acec69eee64bd47db572bc63362463",
        "CC-PDDC (US DoD DD Form 293)",
    ),
    "vicksburg.pdf": Source(
        "pypdf",
        "pypdf-7.1.0/resources/Seige_of_Vicksburg_Sample_OCR.pdf",
        "e8b9d461f035f8ce2440f9061d35b2164148eb3511a487aacfc26a94cb9d90fe",
        "not stated (book scan, 19th-century text; LuraDocument sample)",
    ),
    "side-by-side-subfig.pdf": Source(
        "pypdf",
        "pypdf-7.1.0/resources/side-by-side-subfig.pdf",
        "6d3a4f4e52ac9fd68713980b39cbcfe5a3eb468d38e08fba8c54b8d99bfb2a2b",
        "not stated (pdfTeX sample with two photos)",
    ),
    "jpeg.pdf": Source(
        "pypdf",
        "pypdf-7.1.0/resources/jpeg.pdf",
        "b65ead3923590619dff1f91c3a07302f38c53598b3031aec619042c206257c22",
        "not stated (LibreOffice sample)",
    ),
    "hotos17.pdf": Source(
        "pdfannots",
        "pdfannots-0.5/tests/hotos17.pdf",
        "7d11a4db4199f919544e21e7654ed9111be59d977c98d00d2fea1b9baddfcc5b",
        "not stated (A. Baumann, 'Hardware is the new software', HotOS 2017, annotated)",
    ),
    "word2column.pdf": Source(
        "pdfannots",
        "pdfannots-0.5/tests/word2column.pdf",
        "ceb6d3a12d2f56bf049b06fc25bc6eb4fbf7423fd175441ebee6c702e5756fc2",
        "not stated (Word sample, lorem ipsum/Cicero, annotated)",
    ),
    "12s0324.pdf": Source(
        "tabula-py",
        "tabula_py-2.10.0/tests/resources/12s0324.pdf",
        "092853e4af150d1c72f474a59ce902305e8675c1d04059d5e2af4a628bc6dfbd",
        "not stated (US Census Bureau Statistical Abstract 2012, Table 324; US government work)",
    ),
    "asyRefCard.pdf": Source(
        "asymptote-doc",
        "./usr/share/doc/asymptote/asyRefCard.pdf",
        "ead5a51e5a6b1c30697a1ec14ec5929122fddcd64c4f2bea6e65a8f1e35b64d8",
        "(C) 2014 John C. Bowman; 'refcardlicense': copies with or without modification,"
        " notice kept",
    ),
    "asymptote.pdf": Source(
        "asymptote-doc",
        "./usr/share/doc/asymptote/asymptote.pdf",
        "e17165321f74a5ec1b884cf20773cc43361df8f7fc707b071debf4ef707de051",
        "GPL-3+ (Asymptote manual)",
    ),
    "R-intro.pdf": Source(
        "r-doc-pdf",
        "./usr/share/R/doc/manual/R-intro.pdf",
        "337ccd0b490b1e66f7e783b45f4588d0599730b4206c0c051edfe1419c568c51",
        "(C) Venables, Smith, R Core Team; verbatim copies and modified versions permitted"
        " (notice on p. 2)",
    ),
    "gri-refcard.pdf": Source(
        "gri-pdf-doc",
        "./usr/share/doc/gri/refcard.ps.gz",
        "434e845cb02aeef1940d99cc21f36e04564dfaef46cd9cb7a9309b2abbaa4cf5",
        "GPL-3+ (Gri 2.8 reference card, (C) Dan E. Kelley)",
        postscript_gz=True,
    ),
}

# Typed references of the real scans.
TYPED: dict[str, str] = {}

TYPED["typewriter"] = """Linzensoep à la Waterman
4 ons linzen
3 liter water
3 uien
bloem, boter
2 kopjes melk
laurier, kruidnagel, kerrie, zout
De linzen wassen en in 1 liter kokend wa-
ter 1 dag laten weken. 2 liter water bij
de linzen voegen, zonder het water waarin
ze geweekt zijn af te gieten. De helft van
de uien bakken met laurier en kruidnagel.
Alle uien, kerrie en zout bij de linzen
voegen. Alles aan de kook brengen. Van de
bloem met boter en melk een papje maken en
verder afmaken met de soep. Als de linzen
gaar zijn is de soep klaar."""

# linn.txt from the sdist is Tesseract output ("0" for bullets, "0r", "FOOTSWIT CH", the
# "Additional Features" heading misplaced); corrected against linn.png and put in column order,
# with the page's 19 bullets (U+2022) where it prints them.
TYPED["linn"] = """The LinnSequencer
32 Track MIDI Sequence Recorder
The LinnSequencer is a state-of-the-art composition and performance tool for the professional
musician. It is
extremely powerful, yet amazingly simple to learn and use. It’s many remarkable features include:
• Operation is similar to multi-track tape recorder with PLAY, STOP, RECORD, FAST
FORWARD, REWIND, and LOCATE controls.
• Each of the 100 sequences contains 32 simultaneous, polyphonic tracks. Each track may
be assigned to one of 16 MIDI channels. Simultaneously plays up to 16 polyphonic
synthesizers!
• Ultra-fast 3½″ disk drive stores complex songs in seconds and holds over 110,000 notes
per disk!
• One or all tracks may be TRANSPOSED at the touch of a key.
• Exclusive real-time ERASE function makes editing FAST.
• Exclusive REPEAT function automatically repeats any held notes at a pre-selected
rhythmic value.
• TIMING CORRECTION works during playback and operates without ‘chopping’ notes.
• Optional SMPTE time code synchronization.
• Optional remote control.
Recording a Sequence
To record a sequence, simply press RECORD and PLAY,
then play your MIDI keyboard in time to the Sequencer’s
click track. When the sequence loops back around to bar 1,
you’ll hear what you played—only all timing errors will be
corrected! (Timing correction may be adjusted or defeated).
Any additional notes played will be added into the track
—existing notes are not erased while recording!
FAST FORWARD, REWIND, and LOCATE controls
may be used at any time to quickly access any location in
your sequence for spot-recording. To overdub a new part,
select a different track and start recording—while you
record, the first track will play in perfect sync (unless you
MUTE it, or SOLO another track). In this way, up to 32
tracks may be overdubbed! All MIDI effects are recorded
including pitch bend, modulation, velocity, aftertouch,
sustain pedal, and program changes!
Editing
To erase a wrong note, simply hold ERASE and press
the note to be erased just before it plays in the sequence—
when played back, it will be gone. Notes may also be
added, erased, or changed using the SINGLE STEP func-
tion. To overdub notes at specific points within a sequence,
simply use LOCATE, FAST FORWARD, or REWIND to
find the desired bar number, then start recording.
The INSERT/COPY function allows you to move bars
from one location to another—in the same sequence or a
different one. For example, you might insert a copy of the
first verse between the second chorus and the bridge.
DELETE BARS operates the same way to remove
unwanted sections.
Creating a Song
One way to create a song is to record each track all the
way through (up to 999 bars). Another way is to record
each basic section (verse, chorus, etc.) in individual
sequences, then use the CREATE SONG function to “chain”
them together. CREATE SONG will then automatically
copy all the parts into a new sequence. If desired, you can
even set the last few bars to repeat infinitely, for a fadeout.
Composition Without Compromise
The technology you use should never be so complex that
it interferes with the creative process. That’s precisely why
the LinnSequencer is designed to let you compose, record
and edit while devoting your undivided attention to your
music. See your Linn dealer today for a demonstration!
Additional Features
• Simple, easy to learn operation—the 32 character LCD display clearly guides you through all
operations. If needed, the
HELP button displays additional explanations.
• Non-destructive recording—existing notes are not erased while recording.
• Two FOOTSWITCH INPUTS may be assigned to remotely control many of the commonly used functions,
including
ERASE, REPEAT, PLAY/STOP, or LOCATE.
• Two TRIGGER OUTPUTS may be programmed to output pulses at any selected note value.
• Will sync to standard LinnDrum or Linn 9000 sync tone.
• Utilizes ultra high-speed, 8 MHz 80186 16 bit computer internally for FAST operation.
• TEMPO may be specified in BEATS-PER-MINUTE or FRAMES-PER-BEAT at 24, 25, or 30 frames per second,
(even drop frame!)
• TEMPO may be entered numerically, adjustable in tenths of a Beat-Per-Minute increments, or by
tapping quarter notes
on the TAP TEMPO button.
• TEMPO CHANGES may be programmed into a sequence, with smooth transitions if desired.
• Any TIME SIGNATURE may be used, and may be changed within a song.
Linn
Linn Electronics, Inc.
18720 Oxnard Street, Tarzana, CA 91356
(818) 708-8131 TELEX #298949 LINN UR"""

# Huckleberry Finn, chapter III opening; the caption is placed right after the heading.
TYPED["huckfinn"] = """Chapter III.
MISS WATSON'S LECTURE.
WELL, I got a good going-over in the morning,
from old Miss Watson, on account of my
clothes ; but the widow she didn't scold, but
only cleaned off the grease and clay and
looked so sorry that I thought I would be-
have a while if I could. Then Miss Watson
she took me in the closet and prayed, but
nothing come of it. She told me to pray
every day, and whatever I asked for I would
get it. But it warn't so. I tried it. Once
I got a fish-line, but no hooks. It warn't
any good to me without hooks. I tried for
the hooks three or four times, but somehow
I couldn't make it work. By-and-by, one
day, I asked Miss Watson to try for me, but
she said I was a fool. She never told me
why, and I couldn't make it out no way.
I set down, one time, back in the woods, and had a long think about it. I
says to myself, if a body can get anything they pray for, why don't Deacon
Winn get back the money he lost on pork ? Why can't the widow get back
her silver snuff-box that was stole ? Why can't Miss Watson fat up ? No, says
I to myself, there ain't nothing in it. I went and told the widow about it,
and she said the thing a body could get by praying for it was "spiritual gifts."
This was too many for me, but she told me what she meant—I must help
other people, and do everything I could for other people, and look out for them
all the time, and never think about myself. This was including Miss Watson,"""

TYPED["twocities"] = """with a plain face, on the throne of England;
there were a king with a large jaw and a queen
with a fair face, on the throne of France. In both
countries it was clearer than crystal to the lords
of the State preserves of loaves and fishes, that
things in general were settled for ever.
It was the year of Our Lord one thousand
seven hundred and seventy-five. Spiritual reve-
lations were conceded to England at that
favoured period, as at this. Mrs. Southcott had
recently attained her five-and-twentieth blessed
birthday, of whom a prophetic private in the Life
Guards had heralded the sublime appearance by
announcing that arrangements were made for the
swallowing up of London and Westminster.
Even the Cock-lane ghost had been laid only a
round dozen of years, after rapping out its mes-
sages, as the spirits of this very year last past
(supernaturally deficient in originality) rapped
out theirs. Mere messages in the earthly order of
events had lately come to the English Crown and
People, from a congress of British subjects in
America: which, strange to relate, have proved
more important to the human race than any com-
munications yet received through any of the
chickens of the Cock-lane brood.
France, less favoured on the whole as to mat-
ters spiritual than her sister of the shield and tri-
dent, rolled with exceeding smoothness down
hill, making paper money and spending it. Under
the guidance of her Christian pastors, she enter-
tained herself, besides, with such humane
achievements as sentencing a youth to have his
hands cut off, his tongue torn out with pincers,
and his body burned alive, because he had not
kneeled down in the rain to do honour to a dirty
procession of monks which passed within his
view, at a distance of some fifty or sixty yards. It
is likely enough that, rooted in the woods of
France and Norway, there were growing trees,
when that sufferer was put to death, already
marked by the Woodman, Fate, to come down
and be sawn into boards, to make a certain mov-
able framework with a sack and a knife in it, ter-
rible in history. It is likely enough that in the
rough outhouses of some tillers of the heavy
lands adjacent to Paris, there were sheltered
from the weather that very day, rude carts,
bespattered with rustic mire, snuffed about by
pigs, and roosted in by poultry, which the
Farmer, Death, had already set apart to be his
tumbrils of the Revolution. But that Woodman
and that Farmer, though they work unceasingly,
work silently, and no one heard them as they
went about with muffled tread: the rather, foras-
much as to entertain any suspicion that they
were awake, was to be atheistical and traitorous.
In England, there was scarcely an amount of
order and protection to justify much national
boasting. Daring burglaries by armed men, and
highway robberies, took place in the capital
itself every night; families were publicly cau-
tioned not to go out of town without removing
their furniture to upholsterers' warehouses for
security; the highwayman in the dark was a City
tradesman in the light, and, being recognised and"""

TYPED["covfefe"] = "Covfefe is a perfectly cromulent word."

TYPED["francais"] = """Portez ce vieux whisky au juge
blond qui fume sur son île
intérieure, à côté de l'alcôve
ovoïde, où les bûches se
consument dans l'âtre, ce qui
lui permet de penser à la
cænogénèse de l'être dont il
est question dans la cause
ambiguë entendue à Moÿ, dans
un capharnaüm qui, pense-t-il,
diminue çà et là la qualité de son
œuvre."""

# Charts: y ticks top to bottom, legend, x labels left to right.
TYPED["ace-graph"] = """600
500
400
300
200
100
0
Support
No vote[note 1]
Oppose
Net[note 2]
Percentage [note 3]
Newyorkbrad
NuclearWarfare
Worm That Turned
Carcharoth
Timotheus Canens
Coren
Salvio giuliano
David Fuchs
RegentsPark
Elen of the Roads
Guerillero
Keilana
Beeblebrox
Richwales
Pgallert
Kww
Jc37
Jclemens
Ks0stm
Count Iblis
YOLO Swag"""

TYPED["pandas-graph"] = """Replacement of "creationism" with "intelligent design"
120
100
80
60
40
20
0
Word count
"Creation" and "creationist"
"Intelligent design"
and "design proponent"
Creation Biology (1983)
Biology & Creation (1986)
Biology & Origins (1987)
Pandas draft 1 (1987)
Pandas draft 2 (1987)
Pandas 1st ed (1989)
Pandas 2nd ed (1993)"""


def _damage(
    dpi: int, angle: float, blur: float, noise: float, quality: int, seed: int, turn: int = 0
) -> Damage:
    return Damage(dpi, angle, blur, noise, quality, seed, turn)


_HOTOS_P3 = ((50, 40, 256, 680), (306, 40, 259, 680), (0, 720, 612, 50))

PAGES: tuple[CorpusPage, ...] = (
    # Real scans: given to the pipeline as published.
    CorpusPage(
        "ocrmypdf-2400dpi",
        "2400dpi.pdf",
        1,
        ("high-dpi-small-page", "typewriter"),
        "typewritten Dutch recipe; 4000x2864 px grey scan at 2400 dpi on a 1.7x1.2 in page",
        typed="typewriter",
    ),
    CorpusPage(
        "ocrmypdf-linn",
        "linn.pdf",
        1,
        ("multi-column-2", "bullets"),
        "1985 brochure, 1-bit 300 dpi scan, full-width bullets then 2 columns",
        typed="linn",
    ),
    CorpusPage(
        "ocrmypdf-linn-png",
        "linn.png",
        1,
        ("multi-column-2", "bullets", "native-300dpi"),
        "same brochure as the original 2550x3300 PNG",
        typed="linn",
    ),
    CorpusPage(
        "ocrmypdf-skew",
        "skew.pdf",
        1,
        ("skewed-scan", "multi-column-2"),
        "linn scan placed skewed (~5°) by the CTM",
        typed="linn",
    ),
    CorpusPage(
        "ocrmypdf-cardinal",
        "cardinal.pdf",
        2,
        ("rotated-scan", "multi-column-2"),
        "linn scan turned 90° clockwise (sideways, landscape page)",
        typed="linn",
        rotation=90,
    ),
    CorpusPage(
        "ocrmypdf-cardinal",
        "cardinal.pdf",
        3,
        ("rotated-scan", "multi-column-2"),
        "linn scan upside down",
        typed="linn",
        rotation=180,
    ),
    CorpusPage(
        "ocrmypdf-cardinal",
        "cardinal.pdf",
        4,
        ("rotated-scan", "multi-column-2"),
        "linn scan turned 90° counter-clockwise (sideways)",
        typed="linn",
        rotation=270,
    ),
    CorpusPage(
        "ocrmypdf-c03-29",
        "c03-29.pdf",
        1,
        ("photo-caption", "prose"),
        "1885 book page, engraving with caption, 150 dpi colour JPEG",
        typed="huckfinn",
    ),
    CorpusPage(
        "ocrmypdf-graph",
        "graph.pdf",
        1,
        ("chart",),
        "line chart, slanted x labels, legend, 96 dpi raster",
        typed="ace-graph",
    ),
    CorpusPage(
        "ocrmypdf-multipage",
        "multipage.pdf",
        5,
        ("low-dpi-scan", "multi-column-2", "prose"),
        "2-column book text, 612x792 px grey scan at 72 dpi",
        typed="twocities",
    ),
    CorpusPage(
        "ocrmypdf-multipage",
        "multipage.pdf",
        6,
        ("multi-column-2", "prose"),
        "same text, 1258x1253 px at 147 dpi",
        typed="twocities",
    ),
    CorpusPage(
        "ocrmypdf-epson",
        "epson.pdf",
        1,
        ("small-print",),
        "printout of a Wikipedia article scanned 1-bit at 300 dpi (no reference)",
    ),
    CorpusPage(
        "ocrmypdf-acroform",
        "acroform.pdf",
        1,
        ("one-line",),
        "one line of text with a check box, 400x50 px at 72 dpi",
        typed="covfefe",
    ),
    CorpusPage(
        "ocrmypdf-francais",
        "francais.pdf",
        1,
        ("diacritics",),
        "French pangram with accents, 300 dpi grey JPEG, 3x3 in page",
        typed="francais",
    ),
    CorpusPage(
        "pikepdf-congress",
        "congress.pdf",
        1,
        ("small-print", "high-dpi-small-page"),
        "photo of an 1872 Congressional message, 1000x1520 px at 360 dpi (no reference)",
    ),
    CorpusPage(
        "pikepdf-graph",
        "pike-graph.pdf",
        1,
        ("chart",),
        "line chart with title, rotated axis title, slanted x labels, 300 dpi raster",
        typed="pandas-graph",
    ),
    CorpusPage(
        "pypdf-vicksburg",
        "vicksburg.pdf",
        1,
        ("low-dpi-scan", "photo-caption"),
        "book page with engravings, 100 dpi JPEG2000 (no reference: its layer is unverified OCR)",
    ),
    # Born-digital pages rendered as damaged scans; their text layer is the reference.
    CorpusPage(
        "pdfannots-hotos17",
        "hotos17.pdf",
        1,
        ("multi-column-2", "chart"),
        "2-column paper, title, chart with axis labels, highlights",
        layer_regions=(
            (0, 90, 612, 60),
            (50, 150, 256, 550),
            (306, 150, 259, 180),
            (306, 330, 259, 370),
            (0, 700, 612, 70),
        ),
        damage=_damage(300, 0.35, 0.8, 8, 70, 11),
    ),
    CorpusPage(
        "pdfannots-hotos17",
        "hotos17.pdf",
        3,
        ("multi-column-2", "prose"),
        "2-column paper, text only",
        layer_regions=_HOTOS_P3,
        damage=_damage(200, -0.4, 0.6, 10, 60, 12),
    ),
    CorpusPage(
        "pdfannots-hotos17-sideways",
        "hotos17.pdf",
        3,
        ("multi-column-2", "prose", "rotated-scan"),
        "same page scanned sideways (turned 90° clockwise)",
        layer_regions=_HOTOS_P3,
        damage=_damage(250, 0.2, 0.7, 8, 70, 13, turn=90),
        rotation=90,
    ),
    CorpusPage(
        "pdfannots-word2column",
        "word2column.pdf",
        1,
        ("multi-column-2", "prose"),
        "Word landscape page in 2 columns, headings, highlights",
        layer_regions=((0, 0, 421, 530), (421, 0, 421, 530), (0, 530, 842, 65)),
        damage=_damage(250, -0.3, 0.7, 8, 65, 14),
    ),
    CorpusPage(
        "gri-refcard",
        "gri-refcard.pdf",
        1,
        ("multi-column-3", "small-print"),
        "Gri reference card, landscape, 3 columns of 8-pt text and code",
        layer_regions=((0, 0, 270, 612), (270, 0, 265, 612), (535, 0, 257, 612)),
        damage=_damage(300, 0.25, 0.8, 6, 75, 15),
    ),
    CorpusPage(
        "asymptote-refcard",
        "asyRefCard.pdf",
        1,
        ("multi-column-2", "table", "small-print"),
        "reference card, 2 columns of description/syntax rows in small print",
        layer_regions=((0, 0, 280, 480), (280, 0, 315, 480), (0, 700, 595, 142)),
        damage=_damage(300, -0.2, 0.8, 6, 70, 16),
    ),
    CorpusPage(
        "asymptote-manual",
        "asymptote.pdf",
        111,
        ("chart",),
        "line chart with axis labels and legend, plus code listings",
        layer_regions=(),
        damage=_damage(200, 0.45, 0.6, 10, 55, 17),
    ),
    CorpusPage(
        "r-intro",
        "R-intro.pdf",
        42,
        ("table", "prose"),
        "manual page with a 3-column table of distributions",
        layer_regions=(),
        damage=_damage(250, -0.5, 0.7, 8, 65, 18),
    ),
    CorpusPage(
        "r-intro",
        "R-intro.pdf",
        44,
        ("chart",),
        "two plots with axis labels (rotated y titles), code and prose",
        layer_regions=(),
        damage=_damage(300, 0.3, 0.8, 6, 70, 19),
    ),
    CorpusPage(
        "pikepdf-form-210966",
        "form_210966.pdf",
        1,
        ("form", "small-print"),
        "US VA form 21-0966, boxes and small print",
        layer_regions=(),
        damage=_damage(200, 0.5, 0.6, 8, 60, 20),
    ),
    CorpusPage(
        "pikepdf-form-dd0293",
        "form_dd0293.pdf",
        1,
        ("form", "small-print"),
        "US DoD form DD 293, dense boxes and 6-7 pt print",
        layer_regions=(),
        damage=_damage(300, -0.25, 0.8, 6, 75, 21),
    ),
    CorpusPage(
        "tabula-12s0324",
        "12s0324.pdf",
        1,
        ("table", "small-print"),
        "Statistical Abstract table, numbers, dot leaders (removed before scoring)",
        layer_regions=(),
        damage=_damage(300, 0.15, 0.7, 6, 70, 22),
        strip_leaders=True,
    ),
    CorpusPage(
        "pypdf-side-by-side-subfig",
        "side-by-side-subfig.pdf",
        1,
        ("photo-caption", "prose"),
        "LaTeX page, two photos with sub-captions and a caption",
        layer_regions=(),
        damage=_damage(250, -0.35, 0.7, 8, 65, 23),
    ),
    CorpusPage(
        "pypdf-jpeg",
        "jpeg.pdf",
        1,
        ("one-line", "photo-caption"),
        "one line of text above a photo",
        layer_regions=(),
        damage=_damage(200, 0.4, 0.6, 8, 60, 24),
    ),
)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checked(data: bytes, pinned: str, what: str) -> bytes:
    """`data`, if its sha256 is the pinned one; a CorpusError naming `what` otherwise."""
    got = sha256_of(data)
    if got != pinned:
        raise CorpusError(f"{what}: sha256 {got} is not the pinned {pinned}")
    return data


def download_archive(archive: Archive, directory: Path) -> None:
    """Fetch the archive from its registry: an sdist straight from the package index pip uses
    (its JSON simple API, PEP 691: no build backend runs, as `pip download` of an sdist would to
    read its metadata), `apt-get download` of a .deb (needs `apt-get update` done), a source
    package's upstream tarball straight from Debian's pool, as `apt-get source` would without
    the deb-src lines a build machine lacks (plain HTTP as apt's). The pinned sha256 is the
    check; bytes that are not the pinned ones are never kept."""
    directory.mkdir(parents=True, exist_ok=True)
    if archive.registry == "debian-source":
        name = archive.name
        letter = name[:4] if name.startswith("lib") else name[0]
        _download(f"{DEBIAN_POOL}/{letter}/{name}/{archive.file}", archive, directory)
        return
    if archive.registry == "pypi":
        _download(_sdist_url(archive), archive, directory)
        return
    command = ["apt-get", "download", f"{archive.name}={archive.version}"]
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CorpusError(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")


def _sdist_url(archive: Archive) -> str:
    """Where the package index keeps the pinned sdist, from the project's JSON simple page."""
    index = urllib.request.Request(
        f"{PYPI_SIMPLE}/{archive.name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    files = json.loads(_fetch(index))["files"]
    for entry in files:
        if entry["filename"] == archive.file:
            return str(entry["url"])
    raise CorpusError(f"{PYPI_SIMPLE}/{archive.name}/ lists no {archive.file}")


def _download(url: str, archive: Archive, directory: Path) -> None:
    data = checked(_fetch(url), archive.sha256, archive.file)
    (directory / archive.file).write_bytes(data)


def _fetch(request: str | urllib.request.Request) -> bytes:
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return bytes(response.read())
    except OSError as error:
        url = request if isinstance(request, str) else request.full_url
        raise CorpusError(f"{url}: {error}") from error


def archive_bytes(key: str, cache: Path = CACHE_DIR) -> bytes:
    """The pinned archive, from the cache or downloaded into it."""
    archive = ARCHIVES[key]
    path = cache / "archives" / archive.file
    if not path.exists():
        download_archive(archive, path.parent)
    if not path.exists():
        raise CorpusError(f"{archive.name}=={archive.version}: no {archive.file} was downloaded")
    return checked(path.read_bytes(), archive.sha256, archive.file)


def read_member(archive: bytes, registry: Registry, member: str) -> bytes:
    """One file out of an sdist or a source tarball (tar.gz, tar.xz) or a .deb (its data
    tarball, via dpkg-deb)."""
    if registry == "debian":
        with tempfile.NamedTemporaryFile(suffix=".deb") as deb:
            deb.write(archive)
            deb.flush()
            archive = subprocess.run(
                ["dpkg-deb", "--fsys-tarfile", deb.name], capture_output=True, check=True
            ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        try:
            handle = tar.extractfile(member)
        except KeyError:
            handle = None
        if handle is None:
            raise CorpusError(f"{member} is not a file in the archive")
        return handle.read()


def source_path(key: str, cache: Path = CACHE_DIR) -> Path:
    """The document, checked against its pin and cached (PostScript converted to PDF)."""
    source = SOURCES[key]
    out = cache / "files" / source.archive / key
    if out.exists():
        return out
    archive = ARCHIVES[source.archive]
    data = checked(
        read_member(archive_bytes(source.archive, cache), archive.registry, source.member),
        source.sha256,
        source.member,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    if source.postscript_gz:
        with tempfile.TemporaryDirectory() as work:
            postscript = Path(work) / "in.ps"
            postscript.write_bytes(gzip.decompress(data))
            if shutil.which("ps2pdf") is None:
                raise CorpusError(
                    f"{source.member} is PostScript: converting it needs ps2pdf "
                    "(Debian: apt-get install ghostscript)"
                )
            subprocess.run(["ps2pdf", str(postscript), str(out)], capture_output=True, check=True)
    else:
        out.write_bytes(data)
    return out


def render_grey(path: Path, page: int, dpi: float) -> Image.Image:
    """The PDF page in grey at `dpi`."""
    import pypdfium2  # type: ignore[import-untyped]

    document = pypdfium2.PdfDocument(str(path))
    try:
        bitmap = document[page - 1].render(scale=dpi / 72.0, grayscale=True, draw_annots=True)
        image: Image.Image = bitmap.to_pil()
        return image.convert("L")
    finally:
        document.close()


def damaged_scan(image: Image.Image, damage: Damage) -> Image.Image:
    """A clean greyscale rendering made to look scanned: skew, blur, noise, uneven light."""
    import numpy as np
    from PIL import Image, ImageFilter

    rng = np.random.default_rng(damage.seed)
    turned = image.rotate(
        damage.angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255
    ).filter(ImageFilter.GaussianBlur(damage.blur))
    grey = np.asarray(turned, dtype=np.float32) + rng.normal(0.0, damage.noise, turned.size[::-1])
    height, width = grey.shape
    # A flatbed's lamp lights the glass unevenly: a faint gradient across the sheet.
    grey -= 12.0 * (np.linspace(0, 1, width)[None, :] * np.linspace(0.3, 1, height)[:, None])
    scan = Image.fromarray(np.clip(grey, 0, 255).astype(np.uint8), "L")
    if damage.turn_cw:
        scan = scan.rotate(-damage.turn_cw, expand=True)  # PIL turns counter-clockwise
    return scan


@dataclass(frozen=True)
class PreparedPage:
    """A corpus page as the user would upload it, and what it should read."""

    page: CorpusPage
    document: Path  # the file given to the pipeline
    page_number: int  # the page of `document` to read
    reference: str | None


def prepare(page: CorpusPage, cache: Path = CACHE_DIR) -> PreparedPage:
    """Fetch the page's source and make its input (a damaged scan for born-digital pages) and
    its reference text; every step is cached."""
    source = source_path(page.source, cache)
    document, number = source, page.page
    if page.damage is not None:
        document, number = cache / "scans" / f"{page.id}.jpg", 1
        if not document.exists():
            document.parent.mkdir(parents=True, exist_ok=True)
            scan = damaged_scan(render_grey(source, page.page, page.damage.dpi), page.damage)
            dpi = (page.damage.dpi, page.damage.dpi)
            scan.save(document, "JPEG", quality=page.damage.jpeg_quality, dpi=dpi)
    reference = None
    if page.typed is not None:
        reference = TYPED[page.typed]
    elif page.layer_regions is not None:
        reference = layer_text(source, page.page, page.layer_regions)
    return PreparedPage(page, document, number, reference)


def layer_text(path: Path, page: int, regions: tuple[Region, ...]) -> str:
    """The page's text layer in reading order: `pdftotext -layout` (it keeps line-end hyphens
    as printed, where the default mode joins them), one region after another; without regions,
    the page's crop box (what a viewer shows and render_grey draws)."""
    base = ["pdftotext", "-enc", "UTF-8", "-layout", "-f", str(page), "-l", str(page)]
    crops = [
        ["-x", str(x), "-y", str(y), "-W", str(w), "-H", str(h)]
        for x, y, w, h in regions or shown_region(path, page)
    ] or [[]]
    parts = [
        subprocess.run(
            [*base, *crop, str(path), "-"], capture_output=True, text=True, check=True
        ).stdout
        for crop in crops
    ]
    return "\n".join(parts).strip()


def shown_region(path: Path, page: int) -> tuple[Region, ...]:
    """The page's crop box as a pdftotext region (whole points, from the media box's top left),
    where it is smaller than the media box; none where they are one. pdftotext reads the whole
    media box, crop box or not: the IRS's 2007 tax tables carry a printer's slug above the crop
    box ("Page 44 of 48 … 7:48 - 6-DEC-2007") that no reader of the page can see."""
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    try:
        shown = document[page - 1]
        media, crop = shown.get_mediabox(), shown.get_cropbox()
        rotated = shown.get_rotation() != 0
    finally:
        document.close()
    if rotated or all(abs(a - b) < 0.5 for a, b in zip(media, crop, strict=True)):
        return ()  # a turned page's crop box is not drawn from the top left: read it whole
    left, top = math.floor(crop[0] - media[0]), math.floor(media[3] - crop[3])
    return ((left, top, math.ceil(crop[2] - media[0]) - left, math.ceil(media[3] - crop[1]) - top),)


def licence_of(page: CorpusPage) -> dict[str, str]:
    """Where the page comes from and under what terms, for the benchmark's report."""
    return source_licence(SOURCES[page.source], ARCHIVES)


def source_licence(source: Source, archives: dict[str, Archive]) -> dict[str, str]:
    """Where a source file comes from and under what terms."""
    archive = archives[source.archive]
    return {
        "package": f"{archive.name}=={archive.version} ({archive.registry})",
        "archive_sha256": archive.sha256,
        "member": source.member,
        "member_sha256": source.sha256,
        "package_licence": archive.licence,
        "document_licence": source.licence,
    }
