# Verdict: gunicorn, non-root, migrations applied at start (verdict serve does it).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    VERDICT_INSTANCE_PATH=/var/lib/verdict

WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY service ./service
COPY migrations ./migrations
COPY openapi ./openapi
RUN pip install --no-cache-dir -c requirements.lock -e . \
    && useradd --system --uid 10001 --home /var/lib/verdict verdict \
    && mkdir -p /var/lib/verdict && chown verdict /var/lib/verdict

USER verdict
EXPOSE 8080
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz')"
CMD ["verdict", "serve", "--host", "0.0.0.0", "--port", "8080", "--workers", "2"]
