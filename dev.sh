#!/usr/bin/env bash
# nbgraph's one entry point for people and CI.
#   bash dev.sh lab    set everything up, then open JupyterLab on notebooks/ (extra arguments
#                      go to `jupyter lab`, e.g. --no-browser --port 8899)
#   bash dev.sh test   set everything up, then run the whole test suite (the docs build too)
#   bash dev.sh docs   set everything up, then serve the docs site on localhost (mkdocs serve;
#                      extra arguments go to `mkdocs serve`, e.g. -a 127.0.0.1:8001)
# Works on a fresh Debian machine with Python 3.11 (as root it installs the system
# packages it needs; otherwise it tells you which ones are missing).
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv
PY=${PYTHON:-python3}

need_system_packages() {
    local missing=()
    command -v dot >/dev/null 2>&1 || missing+=(graphviz)
    "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
    if [ "${1:-}" = test ]; then  # the browser test drives Debian's Chromium
        [ -x /usr/bin/chromium ] || missing+=(chromium)
        # the shared page's and the picture's JavaScript run in node in the unit tests
        command -v node >/dev/null 2>&1 || missing+=(nodejs)
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "dev.sh: installing system packages: ${missing[*]}"
            DEBIAN_FRONTEND=noninteractive apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        else
            echo "dev.sh: please install these Debian packages first: ${missing[*]}" >&2
            echo "        sudo apt-get install ${missing[*]}" >&2
            exit 1
        fi
    fi
}

setup_python() {
    local extras=$1
    if [ ! -x "$VENV/bin/python" ]; then
        "$PY" -m venv "$VENV"
    fi
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -e ".[$extras]"
}

case "${1:-}" in
    lab)
        need_system_packages lab
        setup_python lab,langchain,langgraph,dask  # notebooks 07-09: langchain, LangGraph, Dask
        lab_args=()
        if [ "$(id -u)" = 0 ]; then
            lab_args+=(--allow-root)  # Jupyter refuses root without it (a fresh VM, a container)
        fi
        exec "$VENV/bin/jupyter" lab "${lab_args[@]}" "${@:2}" notebooks/
        ;;
    test)
        need_system_packages test
        setup_python "test,lab,docs"
        "$VENV/bin/ruff" check nbgraph tests benchmarks
        set +e
        "$VENV/bin/python" -m pytest "${@:2}"
        status=$?
        set -e
        if [ "$status" = 5 ]; then
            echo "dev.sh: pytest collected no tests; that is a failure here." >&2
            exit 1
        fi
        exit "$status"
        ;;
    docs)
        need_system_packages docs
        setup_python "lab,langchain,langgraph,dask,docs"  # the notebooks run as the site is built
        exec "$VENV/bin/mkdocs" serve "${@:2}"
        ;;
    *)
        echo "usage: bash dev.sh lab [jupyter lab args] | bash dev.sh test [pytest args]" \
             "| bash dev.sh docs [mkdocs serve args]" >&2
        exit 2
        ;;
esac
