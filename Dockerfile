# The production image: gunicorn (web) and Celery (worker) share it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /srv/perfcase

COPY pyproject.toml setup.py LICENSE ./
COPY app ./app
COPY investigations ./investigations
COPY collectors ./collectors
# The capture analysis's hot loop is C (collectors/capture/_core.c): built here, then the
# compiler goes.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install -e . \
    && apt-get purge -y gcc libc6-dev && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*

# A CJK font, so that Chinese text comes out as Chinese (not boxes) wherever this image
# renders a page to PDF or an image; the print view's font stack names it.
RUN apt-get update && apt-get install -y --no-install-recommends fonts-wqy-microhei \
    && rm -rf /var/lib/apt/lists/*

COPY manage.py ./
COPY templates ./templates
COPY static ./static
COPY locale ./locale
# The interface's translations are compiled here; gettext is not kept in the image.
RUN apt-get update && apt-get install -y --no-install-recommends gettext \
    && python manage.py compilemessages -v 0 \
    && apt-get purge -y gettext && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*
# collectstatic needs production settings to load; these values exist only for this step.
RUN PERFCASE_DEBUG=0 PERFCASE_SECRET_KEY=collectstatic-only PERFCASE_ALLOWED_HOSTS=build \
    PERFCASE_CREDENTIAL_KEYS=collectstatic-only python manage.py collectstatic --noinput

RUN useradd --system --create-home perfcase && mkdir -p /data/media && chown perfcase /data/media
USER perfcase
EXPOSE 8000
CMD ["gunicorn", "app.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-", "--logger-class", "investigations.log_records.GunicornLogger"]
