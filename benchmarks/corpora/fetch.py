"""Fetch a corpus document from its registry, checked against its pins and cached.

Archives are downloaded from PyPI (an sdist) or Debian (a .deb, or a source package's upstream
tarball) once, into FETCH_CACHE (git-ignored); every byte kept is the pinned one.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from benchmarks.corpora import Archive, CorpusError, Registry, Source, archives, sources

REPO_ROOT = Path(__file__).resolve().parents[2]
FETCH_CACHE = REPO_ROOT / ".cache" / "corpora"
# Where Debian publishes its source packages' upstream tarballs (the archive apt's deb-src
# lines name): pool/<component>/<first letter, or lib + one>/<source package>/<file>.
DEBIAN_POOL = "http://deb.debian.org/debian/pool/main"
PYPI_SIMPLE = "https://pypi.org/simple"


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


def archive_bytes(key: str, cache: Path = FETCH_CACHE) -> bytes:
    """The pinned archive, from the cache or downloaded into it."""
    archive = archives()[key]
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


def source_path(key: str, cache: Path = FETCH_CACHE) -> Path:
    """The document, checked against its pin and cached (PostScript converted to PDF)."""
    source = sources()[key]
    out = cache / "files" / source.archive / key
    if out.exists():
        return out
    archive = archives()[source.archive]
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


def licence_of(source_key: str) -> dict[str, str]:
    """Where a corpus document comes from and under what terms, for a benchmark's report."""
    source: Source = sources()[source_key]
    archive = archives()[source.archive]
    return {
        "package": f"{archive.name}=={archive.version} ({archive.registry})",
        "archive_sha256": archive.sha256,
        "member": source.member,
        "member_sha256": source.sha256,
        "package_licence": archive.licence,
        "document_licence": source.licence,
    }
