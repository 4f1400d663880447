FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    CE_HOST=0.0.0.0 CE_PORT=8080 CE_DATABASE_URL=sqlite:////data/context-engine.db CE_LOG_FORMAT=json

RUN useradd --create-home --uid 10001 app && mkdir /data && chown app:app /data
WORKDIR /srv
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
RUN pip install --no-cache-dir .
USER app
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8080/healthz').status != 200)"
CMD ["python", "-m", "app", "serve"]
