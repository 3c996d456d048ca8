# Sourced by scripts/*: make `uv` available (installing it from PyPI if needed) and pin Python 3.11.
export UV_PYTHON_DOWNLOADS=never
export UV_PYTHON="${UV_PYTHON:-3.11}"
UV_VERSION="0.13.9"
if command -v uv >/dev/null 2>&1; then
  UV=(uv)
else
  if ! python3 -m uv --version >/dev/null 2>&1; then
    echo "scripts: installing uv ${UV_VERSION} from PyPI" >&2
    python3 -m pip install --quiet "uv==${UV_VERSION}" >&2
  fi
  UV=(python3 -m uv)
fi

# A fresh clone's first `uv sync` downloads every locked package (PyPI, or uv's own cache): say so.
if [ ! -d .venv ]; then
  echo "scripts: installing the Python packages of uv.lock into .venv (from PyPI, or uv's cache)" >&2
fi
