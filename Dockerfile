# Verdict: gunicorn, non-root, migrations applied at start (verdict serve does it).
# Installed from a wheel as users install it (the build puts the top-level migrations/ and
# openapi/ inside the package); the repository itself is not in the image.
# The base image is pinned to an exact release (Python and Debian), so that a rebuild gets the
# same interpreter; bump it deliberately. Not to a digest yet: on 2026-11-27 the registry could
# not be reached from the machine this was written on (registry-1.docker.io and auth.docker.io
# did not resolve; no Docker daemon), and a digest nobody checked is not a pin. Where it is
# reachable: `docker buildx imagetools inspect python:3.11.13-slim-bookworm`, then
# PYTHON_IMAGE=python:3.11.13-slim-bookworm@sha256:<that digest> (the test accepts either form).
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm
FROM ${PYTHON_IMAGE} AS build
# A C compiler for the duplicate-key scanner (service/ingest/_body.c); the runtime image
# gets the built wheel and needs none.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY service ./service
COPY migrations ./migrations
COPY openapi ./openapi
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

FROM ${PYTHON_IMAGE}
# `verdict serve` reads its options from VERDICT_HOST, VERDICT_PORT, VERDICT_WORKERS and
# VERDICT_THREADS, so `docker run -e VERDICT_WORKERS=4 ...` takes effect: the CMD sets none.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    VERDICT_INSTANCE_PATH=/var/lib/verdict \
    VERDICT_HOST=0.0.0.0 VERDICT_PORT=8080
COPY requirements.lock /tmp/requirements.lock
COPY --from=build /dist /tmp/dist
RUN pip install --no-cache-dir -c /tmp/requirements.lock /tmp/dist/verdict-*.whl \
    && rm -rf /tmp/dist /tmp/requirements.lock \
    && groupadd --system --gid 10001 verdict \
    && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/verdict verdict \
    && install -d -m 0700 -o 10001 -g 10001 /var/lib/verdict

# The SQLite default (and the console's secret, the checkpoint log) live here, owner-only.
VOLUME ["/var/lib/verdict"]
# Numeric, so that Kubernetes' runAsNonRoot can check it without a user database.
USER 10001:10001
WORKDIR /var/lib/verdict
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:${VERDICT_PORT}/healthz', timeout=4)"
CMD ["verdict", "serve"]
