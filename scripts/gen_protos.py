"""Regenerate lancefile's protobuf modules from the .proto files beside them.

Usage::

    python scripts/gen_protos.py

Needs ``grpcio-tools`` (``pip install -e '.[dev]'``). The generated ``*_pb2.py`` files are
committed so users never need protoc; run this after editing a ``.proto`` file.
"""

from __future__ import annotations

import pathlib
import sys

from grpc_tools import protoc
import grpc_tools

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PROTO_DIR = SRC / "lancefile" / "_proto"


def main() -> int:
    include = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    protos = sorted(PROTO_DIR.glob("*.proto"))
    args = ["protoc", f"-I{SRC}", f"-I{include}", f"--python_out={SRC}", f"--pyi_out={SRC}"]
    args += [str(p.relative_to(SRC)) for p in protos]
    rc = protoc.main(args)
    if rc != 0:
        print("protoc failed", file=sys.stderr)
        return rc
    print(f"generated {len(protos)} modules in {PROTO_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
