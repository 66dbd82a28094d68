#!/usr/bin/env bash
# Makes the Python environment the importers (tools/import/) and the real-model
# suite (tests/models/) run in: a venv at build/venv holding exactly the pinned
# packages below, nothing else. Safe and fast to run again: a stamp file in the
# venv records the package list, and a venv whose stamp matches is left alone;
# a different list rebuilds the venv from scratch.
#
# Lean PyTorch: torch's wheel on PyPI declares some 3 GB of NVIDIA CUDA wheels
# (cuBLAS, cuDNN, ...). Nothing here runs on a GPU, so torch, torchvision,
# torch-mlir and onnx are installed with --no-deps, plus the four small NVIDIA
# wheels whose libraries libtorch_cuda.so loads at `import torch` and no CUDA
# toolkit provides (cuFile, cuSPARSELt, NVSHMEM, NCCL). The rest of libtorch's
# CUDA libraries (cudart, cuBLAS, cuDNN, cuFFT, ...) come from a CUDA toolkit
# in ld.so's path when there is one. When there is none, `import torch` names a
# missing library, and this script then installs torch's own NVIDIA wheels
# (its declared dependencies, about 3 GB) and says so.
#
# PYTHON=python3.11 picks the interpreter (default python3; the wheels below
# are for CPython 3.11, Debian bookworm's). pip's own settings apply
# (PIP_INDEX_URL, PIP_FIND_LINKS for a folder of wheels, the pip cache).
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=build/venv
stamp=$venv/strata-packages.txt
python=${PYTHON:-python3}

# Installed with --no-deps, as is everything: the list is the whole closure.
packages=(
  # PyTorch and the importers, without torch's CUDA dependency tree
  torch==2.15.0 torchvision==0.29.2 torch-mlir==20261001 onnx==1.23.2
  # the CUDA libraries libtorch_cuda.so needs that a CUDA toolkit lacks
  # (the versions torch 2.15.0 declares)
  nvidia-cufile==1.17.1.22 nvidia-cusparselt-cu13==0.8.1 nvidia-nvshmem-cu13==3.7.2
  nvidia-nccl-cu13==2.30.7
  # torch's, torchvision's, torch-mlir's and onnx's pure dependencies
  numpy==2.4.6 typing_extensions==4.16.0 sympy==1.14.0 mpmath==1.3.0 networkx==3.6.1
  Jinja2==3.1.6 MarkupSafe==3.0.4 fsspec==2026.9.0 filelock==4.2.12 packaging==26.3
  pillow==13.0.0 protobuf==7.36.2 ml_dtypes==0.6.0
  # transformers (models built from configs, no weights downloaded) and its closure
  transformers==5.23.0 tokenizers==0.23.3 safetensors==0.8.0 regex==2026.11.15
  PyYAML==6.0.3 tqdm==4.70.1 huggingface_hub==2.4.0 hf-xet==1.8.0 httpx2==2.16.2
  httpcore2==2.16.2 h11==0.16.0 anyio==4.16.0 idna==3.20 truststore==0.10.5
  typer==0.29.2 click==8.5.1 rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2
  Pygments==2.21.0 shellingham==1.5.4 annotated-doc==0.0.7
  pydantic==2.14.3 pydantic_core==2.50.4 annotated-types==0.8.0 typing-inspection==0.4.5
)
# What the stamp records: the interpreter's version and the list.
wanted="$("$python" -c 'import sys; print("python %d.%d" % sys.version_info[:2])' 2>/dev/null \
  || echo "python missing")
$(printf '%s\n' "${packages[@]}")"

fail() { echo "setup-python: $*" >&2; exit 1; }

if [ -x $venv/bin/python ] && [ -f $stamp ] && [ "$(head -n -1 $stamp)" = "$wanted" ]; then
  echo "setup-python: $venv is up to date ($(tail -n 1 $stamp))"
  exit 0
fi

command -v "$python" >/dev/null || fail "no $python; install Debian's python3 (apt-get install python3) or set PYTHON"

venv_error=
make_venv() { rm -rf $venv && venv_error=$("$python" -m venv $venv 2>&1); }
echo "setup-python: creating $venv with $("$python" --version 2>&1)"
mkdir -p build
if ! make_venv; then
  # Debian's python3 leaves venv (ensurepip) to the python3-venv package.
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] && command -v dpkg-query >/dev/null \
     && ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed"; then
    echo "setup-python: '$python -m venv' failed; installing Debian's python3-venv"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv \
      || fail "could not install python3-venv"
    make_venv || fail "'$python -m venv $venv' failed: $venv_error"
  else
    fail "'$python -m venv $venv' failed: $venv_error"
  fi
fi

pip=($venv/bin/python -m pip --disable-pip-version-check)
echo "setup-python: installing ${#packages[@]} pinned packages (torch without its CUDA wheels)"
"${pip[@]}" install -q --no-deps "${packages[@]}" \
  || fail "pip could not install the pinned packages for $("$python" --version 2>&1) (see above);" \
          "PyPI must be reachable (or PIP_FIND_LINKS hold the wheels), with wheels for this Python"

check_imports() {
  $venv/bin/python -c 'import torch, torchvision, torch_mlir.fx, onnx, transformers, numpy' 2>&1
}
mode="lean: torch's CUDA libraries from the system"
if ! error=$(check_imports); then
  missing=$(grep -o 'lib[A-Za-z0-9_+-]*\.so[.0-9]*' <<<"$error" | head -n 1 || true)
  if [ -z "$missing" ]; then
    fail "the packages installed but do not import: $(tail -n 1 <<<"$error")"
  fi
  echo "setup-python: import torch needs $missing, which no CUDA toolkit in ld.so's path provides;"
  echo "setup-python: installing torch's own NVIDIA CUDA wheels (its declared dependencies, about 3 GB)"
  "${pip[@]}" install -q torch==2.15.0 \
    || fail "pip could not install torch's CUDA dependencies (see above)"
  error=$(check_imports) \
    || fail "torch still does not import with its CUDA wheels: $(tail -n 1 <<<"$error")"
  mode="torch's own NVIDIA CUDA wheels: no CUDA toolkit found"
fi
printf '%s\n%s\n' "$wanted" "$mode" >$stamp
echo "setup-python: $venv ready ($mode)"
