#!/usr/bin/env bash
# The agent frameworks the Python integrations are tested against (clients/python/knowhub/integrations:
# LangGraph's store, LangChain's tools and retriever), from PyPI into a venv under .cache/ (never into
# the system Python), pinned with hashes in clients/python/requirements-integrations.txt.
#
# Prints the venv's folder on its last line (`--check`: only whether an install is due, by the exit
# code). Quick when everything is there (a stamp names the
# requirements' hash and the Python version). test/clients/python-integrations.test.ts finds the venv
# by itself; `npm test` runs this through scripts/test-setup.sh. Pure-Python wheels and a few small
# binary ones: about 10 s from a warm pip cache, about 30 s from PyPI.
#
# Needs python3 with venv (Debian: python3-venv).
set -euo pipefail
cd "$(dirname "$0")/.."

# KNOWHUB_INTEGRATIONS_VENV: another folder for the venv (test/clients/python-integrations.test.ts reads it too).
VENV="${KNOWHUB_INTEGRATIONS_VENV:-.cache/venv-integrations}"
REQ=clients/python/requirements-integrations.txt

stamp="$(sha256sum "$REQ" | cut -d' ' -f1) $(python3 --version 2>&1)"
if [ -f "$VENV/.knowhub-integrations" ] && [ "$(cat "$VENV/.knowhub-integrations")" = "$stamp" ]; then
  echo "$(cd "$VENV" && pwd)"
  exit 0
fi
# `--check`: exit 1 when an install is due (above: 0 when everything is there); installs nothing.
[ "${1:-}" = "--check" ] && exit 1

if [ ! -x "$VENV/bin/python" ]; then
  echo "integrations-setup: creating the venv $VENV" >&2
  python3 -m venv "$VENV"
fi
echo "integrations-setup: installing $REQ into $VENV" >&2
"$VENV/bin/pip" install --quiet --require-hashes --only-binary :all: -r "$REQ" >&2
echo "$stamp" > "$VENV/.knowhub-integrations"
echo "$(cd "$VENV" && pwd)"
