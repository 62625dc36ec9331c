#!/usr/bin/env bash
# The agent frameworks the Python integrations are tested against (clients/python/knowhub/integrations:
# LangGraph's store, LangChain's tools and retriever), from PyPI into a venv under .cache/ (never into
# the system Python), pinned with hashes in clients/python/requirements-integrations.txt.
#
# Prints the venv's folder on its last line. Quick when everything is there (a stamp names the
# requirements' hash and the Python version). test/clients/python-integrations.test.ts finds the venv
# by itself; `npm test` runs this through scripts/test-setup.sh. Pure-Python wheels and a few small
# binary ones: about 10 s from a warm pip cache, about 30 s from PyPI.
#
# Needs python3 with venv (Debian: python3-venv).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.cache/venv-integrations
REQ=clients/python/requirements-integrations.txt

stamp="$(sha256sum "$REQ" | cut -d' ' -f1) $(python3 --version 2>&1)"
if [ -f "$VENV/.knowhub-integrations" ] && [ "$(cat "$VENV/.knowhub-integrations")" = "$stamp" ]; then
  echo "$PWD/$VENV"
  exit 0
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "integrations-setup: creating the venv $VENV" >&2
  python3 -m venv "$VENV"
fi
echo "integrations-setup: installing $REQ into $VENV" >&2
"$VENV/bin/pip" install --quiet --require-hashes -r "$REQ" >&2
echo "$stamp" > "$VENV/.knowhub-integrations"
echo "$PWD/$VENV"
