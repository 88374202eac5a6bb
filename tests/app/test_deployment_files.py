"""docker-compose.yml and .env.example must name only settings the app really reads."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
SETTINGS = (ROOT / "app" / "settings.py").read_text()
READ_BY_SETTINGS = set(
    re.findall(r'env_(?:str|bool|int|list|rate|networks)\(\s*"([A-Z0-9_]+)"', SETTINGS)
)
# Read by docker compose itself (variable substitution), not by the app.
READ_BY_COMPOSE = {"POSTGRES_PASSWORD", "PERFCASE_PORT"}


def _app_services(compose: dict) -> dict:
    return {
        name: service
        for name, service in compose["services"].items()
        if service.get("build") or service.get("image", "").startswith("perfcase")
    }


def test_compose_sets_only_variables_the_settings_read():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = _app_services(compose)

    assert set(services) == {"migrate", "web", "worker", "worker-b"}
    for name, service in services.items():
        unknown = set(service.get("environment", {})) - READ_BY_SETTINGS
        assert not unknown, f"{name} sets {unknown}, which app/settings.py never reads"
        assert service["env_file"] == ".env"


def test_the_env_example_lists_every_setting_and_nothing_else():
    names = set(re.findall(r"^#?\s?([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))

    assert names - READ_BY_COMPOSE == READ_BY_SETTINGS


def test_the_worker_and_web_run_the_same_image_on_postgres_and_redis():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = _app_services(compose)

    for service in services.values():
        assert service["environment"]["DATABASE_URL"].startswith("postgres://")
        assert service["environment"]["CELERY_BROKER_URL"].startswith("redis://redis:")
    assert services["worker"]["command"][:4] == ["celery", "-A", "app", "worker"]
    assert "gunicorn" in (ROOT / "Dockerfile").read_text()


def test_the_workers_share_no_disk_with_the_web_only_the_object_store():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = _app_services(compose)

    for name, service in services.items():
        assert not service.get("volumes"), f"{name} mounts {service['volumes']}"
        assert service["environment"]["PERFCASE_S3_BUCKET"], name
        assert service["environment"]["PERFCASE_S3_ENDPOINT_URL"] == "http://objects:8333"
    assert compose["services"]["objects"]["image"].startswith("chrislusf/seaweedfs")
    assert services["worker-b"]["command"] == services["worker"]["command"]
